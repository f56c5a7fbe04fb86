"""The one place the build version lives (read by setuptools and by `hello.server_version`)."""

__version__ = "0.1.0.dev0"
PROTOCOL_VERSION = "0.1.0"
