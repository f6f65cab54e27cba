"""Step 1 of the data flow: sweep and job specs, their parameters, and resolving names
(the registry and plugins) into the live objects a job needs."""
