"""Reading gyroscope recordings: files and exports, their table formats, and the bounds on what they may make Tumble read.
No fitting here: everything above reads recordings through this room."""
