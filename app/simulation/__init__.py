"""The simulation layer: the stepping loop, pacing, bounded history, the worker thread, benchmarks."""
