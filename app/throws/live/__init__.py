"""A phone live: the phyphox client, the session that stores and fits throws as they land, and a stand-in phone
that serves recordings over the same protocol."""
