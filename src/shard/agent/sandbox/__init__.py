"""The sandbox bash runs in (issue 19, 25): ``bwrap`` (bubblewrap, the command it builds and whether it
works here), ``places`` (each call's mounts: what is bound, protected and hidden), ``proxy`` (the way
out to allowed hosts) and ``bridge`` (run by path inside the sandbox, so imported by nobody)."""
