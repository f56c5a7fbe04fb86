"""How long a unix socket's path may be, for the folders Shard makes its sockets in (the ssh control
masters', the sandbox proxy's): ``sun_path`` holds 108 bytes, and ssh appends a random suffix while
it binds, so a path of at most this many bytes is the one kept to. Imports nothing."""

SOCKET_PATH_MAX = 100
