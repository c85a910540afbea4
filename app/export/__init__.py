"""Export: movies, GIFs, frame sequences and data, re-simulated offscreen."""
