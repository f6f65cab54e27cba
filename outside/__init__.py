"""Third-party benchmarks, replayed as fbench workloads. Each reaches fbench through the
public plugin path (an entry point in ``fbench.workloads``), as an outside package would;
its library is an optional extra, imported only when a job runs it."""
