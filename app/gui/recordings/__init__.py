"""Recordings in the window: the import dialog with its flights table, rates plot and Predict tab, its worker
process, and recordings given on the command line or dropped on a window."""
