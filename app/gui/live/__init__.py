"""A phone live in the window: the Phone dock with its connection, live strip and flights.
The stream itself lives in tumble.throws.live."""
