"""What every room of the window shares: the theme, the persistent settings, the heap trimming.
Imports no other room of gui."""
