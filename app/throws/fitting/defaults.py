"""Defaults the command line's parser reads: here, away from the fitting modules, which import
scipy's optimisers (half a second that every command paid while building its parser)."""

#: playback speed of a replay (s of flight per s of video or of wall time): a flight lasts
#: about a second; at a quarter of its speed a class sees the flip
DEFAULT_SPEED = 0.25
