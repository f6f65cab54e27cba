"""The headroom check (``fbench calibrate``): does a workload tell policies apart?"""
