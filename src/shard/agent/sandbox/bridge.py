"""Run inside the sandbox, by path, before the command: ``python sandbox/bridge.py SOCKET PORT -- ARGV``.

It listens on ``127.0.0.1:PORT`` in the sandbox's own network namespace, then forks: the child
passes every connection to the unix ``SOCKET`` (the runtime's allow-list proxy, bound into the
sandbox), the parent ``exec``s the command — so the port is open before the command's first line
runs. Standard library only: it runs with the interpreter's own path and imports nothing of Shard.
The child dies with the sandbox (its PID namespace ends with the command).
"""

import contextlib
import os
import socket
import sys
import threading


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := src.recv(65536):
            dst.sendall(data)
    for s in (src, dst):
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        conn, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX)
        try:
            upstream.connect(path)
        except OSError:
            conn.close()
            continue
        threading.Thread(target=_pipe, args=(conn, upstream), daemon=True).start()
        threading.Thread(target=_pipe, args=(upstream, conn), daemon=True).start()


def main(argv: list[str]) -> None:
    path, port, sep, *command = argv
    if sep != "--" or not command:
        sys.exit("usage: sandbox/bridge.py SOCKET PORT -- COMMAND…")
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(port)))
    listener.listen(64)
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # the command's output pipe is the command's, not held open by this
            os.dup2(null, fd)
        _serve(listener, path)
        os._exit(0)
    listener.close()
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
