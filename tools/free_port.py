#!/usr/bin/env python3
"""A loopback port free for TCP and UDP, for a daemon that must be told its port before it starts.

Ports are picked below the kernel's ephemeral range (net.ipv4.ip_local_port_range),
so no outgoing connection, dig query or port-0 listener elsewhere on the machine
can take the port between the pick and the daemon's bind: a port the kernel hands
out itself is fair game for the next connect(), and a cluster whose three deciders
must know each other's addresses up front cannot retry with a new one. Only
another explicit picker competes, and the pick is random across the range and
checked with a bind.

Run as a script it prints N ports (default 1), all different, one per line.
"""

import random
import socket
import sys


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(host, port):
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_INET, kind) as s:
            try:
                s.bind((host, port))
            except OSError:
                return False
    return True


def free_port(host="127.0.0.1", taken=()):
    """A port in [10000, ephemeral range) bindable for TCP and UDP right now, not in `taken`."""
    high = _ephemeral_low()
    low = 10000 if high > 11000 else 1024
    for _ in range(200):
        port = random.randrange(low, high)
        if port not in taken and _bindable(host, port):
            return port
    raise RuntimeError("no free port below the ephemeral range %d" % high)


if __name__ == "__main__":
    picked = []
    for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 1):
        picked.append(free_port(taken=picked))
    print("\n".join(str(p) for p in picked))
