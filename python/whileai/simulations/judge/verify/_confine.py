"""Confinement, run first inside a sandbox: the file system, the user, the limits (stdlib only).

``sandbox.py`` runs this module's source followed by ``_harness.py``'s as one ``python -c``
program, so :func:`confine` is in scope there. In ``unshare`` mode it builds the file system (a
tmpfs root with read-only binds, a fresh ``/proc``, a private ``/tmp``, moved over ``/``, then
chroot); in every isolated mode it drops to an unprivileged user (or every capability inside a
user namespace), sets ``no_new_privs`` and the resource limits, and empties the environment.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["confine"]


def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        import ctypes

        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _build_root(cfg: dict[str, Any]) -> None:
    """unshare mode: a tmpfs root with read-only binds, /proc, /dev nodes and a private /tmp."""
    libc = _libc()
    ms_rdonly, ms_nosuid, ms_nodev, ms_noexec = 1, 2, 4, 8
    ms_remount, ms_bind, ms_rec, ms_private = 32, 4096, 16384, 1 << 18

    def mount(src: str | None, dst: str, kind: str | None, flags: int, data: str = "") -> None:
        _check(libc.mount(src and src.encode(), dst.encode(), kind and kind.encode(), flags,
                          data.encode() if data else None), f"mount {dst}")

    root = cfg["root"]
    mount(None, "/", None, ms_rec | ms_private)
    mount("tmpfs", root, "tmpfs", ms_nosuid | ms_nodev, "mode=0755,size=16m")

    def ro_bind(src: str, dst: str) -> None:
        target = root + dst
        if os.path.isdir(src):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "a").close()
        mount(src, target, None, ms_bind | ms_rec)
        locked = 0  # a user namespace may not clear these on a mount it inherited
        flags = os.statvfs(target).f_flag
        for st_flag, ms_flag in ((os.ST_NOSUID, ms_nosuid), (os.ST_NODEV, ms_nodev),
                                 (os.ST_NOEXEC, ms_noexec), (1024, 1024), (2048, 2048),
                                 (4096, 1 << 21)):  # noatime, nodiratime, relatime
            if flags & st_flag:
                locked |= ms_flag
        mount(None, target, None, ms_remount | ms_bind | ms_rdonly | ms_nosuid | locked)

    for src, dst in cfg["binds"]:
        ro_bind(src, dst)
    for link, target in cfg["links"]:
        os.symlink(target, root + link)
    os.makedirs(root + "/proc")
    mount("proc", root + "/proc", "proc", ms_nosuid | ms_nodev | ms_noexec)
    os.makedirs(root + "/dev")
    for node in ("null", "zero", "random", "urandom"):
        open(root + "/dev/" + node, "a").close()
        mount("/dev/" + node, root + "/dev/" + node, None, ms_bind)
    os.makedirs(root + "/tmp")
    mount("tmpfs", root + "/tmp", "tmpfs", ms_nosuid | ms_nodev,
          f"mode=1777,size={cfg['tmp_bytes']}")
    mount(None, root, None, ms_remount | ms_rdonly | ms_nosuid | ms_nodev)
    # move the new root over "/" before chroot: the host's tree is then hidden under a locked
    # mount, so even a chroot escape from a nested user namespace lands in the sandbox's root
    os.chdir(root)
    mount(root, "/", None, 1 << 13)  # MS_MOVE
    os.chroot(".")
    os.chdir("/")


def _drop_capabilities() -> None:
    """Inside a user namespace we are root with every capability there: give them all up."""
    import ctypes

    libc = _libc()
    for cap in range(64):
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP; EINVAL past the last capability

    class Header(ctypes.Structure):
        _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))

    class Data(ctypes.Structure):
        _fields_ = (("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32))

    header, data = Header(0x20080522, 0), (Data * 2)()
    _check(libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def confine(cfg: dict[str, Any]) -> None:
    """Confine this process as ``cfg`` says (mode, setuid, limits, and the unshare layout)."""
    import resource

    mode = cfg["mode"]
    if mode == "unshare":
        _build_root(cfg)
    if mode != "none":
        os.chdir("/tmp")
        if cfg.get("setuid") is not None:  # root outside: become nobody (drops every capability)
            uid = cfg["setuid"]
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        elif mode == "unshare":
            _drop_capabilities()
        _check(_libc().prctl(38, 1, 0, 0, 0), "no_new_privs")  # PR_SET_NO_NEW_PRIVS
    limits = cfg["limits"]
    for name, value in limits.items():
        limit = getattr(resource, name)
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            _soft, hard = resource.getrlimit(limit)
            if mode == "none" or (hard != resource.RLIM_INFINITY and hard < value):
                continue  # unsafe mode is best effort; a lower hard limit already holds
            raise
    home = "/tmp" if mode != "none" else os.getcwd()
    os.environ.clear()
    os.environ.update({"PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": home,
                       "LANG": "C.UTF-8"})
