"""What processes listen on, read from the kernel's socket table (/proc/net/tcp{,6})."""

import os

from tests.hygiene.conftest import tree_of


def _socket_inodes(pid):
    inodes = set()
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return inodes
    for fd in names:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def _address(family, hexaddr):
    """A readable address of /proc/net/tcp{,6} ``local_address`` (host byte order words)."""
    addr, port = hexaddr.split(":")
    if family == "tcp":
        ip = ".".join(str(b) for b in reversed(bytes.fromhex(addr)))
        return f"{ip}:{int(port, 16)}"
    words = [bytes.fromhex(addr[i:i + 8])[::-1].hex() for i in range(0, 32, 8)]
    text = "".join(words)
    return f"[{':'.join(text[i:i + 4] for i in range(0, 32, 4))}]:{int(port, 16)}"


def is_loopback(address):
    if address.startswith("["):
        text = address[1:address.index("]")].replace(":", "")
        return text == "0" * 31 + "1" or (text.startswith("0" * 20 + "ffff") and text[24:26] == "7f")
    return address.startswith("127.")


def listening(pids):
    """The TCP addresses ``pids`` listen on, as ``{address: pid}`` (``127.0.0.1:4242``,
    ``[0000:...:0001]:4242``), read from /proc/net/tcp and /proc/net/tcp6."""
    owner = {}
    for pid in pids:
        for inode in _socket_inodes(pid):
            owner[inode] = pid
    found = {}
    for family in ("tcp", "tcp6"):
        try:
            with open(f"/proc/net/{family}", encoding="ascii") as fh:
                lines = fh.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[3] == "0A" and cols[9] in owner:  # 0A: LISTEN
                found[_address(family, cols[1])] = owner[cols[9]]
    return found


class ListenWatch:
    """Polls, in a thread, what this process and every process below it listen on."""

    def __init__(self, period=0.05, tree=True):
        import threading

        self.period, self.tree = period, tree
        self.seen = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            me = os.getpid()
            self.seen.update(listening([me] + (tree_of(me) if self.tree else [])))
            self._stop.wait(self.period)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def off_host(self):
        return sorted(a for a in self.seen if not is_loopback(a))
