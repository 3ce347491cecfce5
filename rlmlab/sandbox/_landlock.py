"""Landlock and rlimits, applied by the worker to itself once Python and its modules are loaded.

Landlock (Linux 5.13+, an unprivileged LSM) is called through ``ctypes`` syscalls: no compiler, no package.
What it denies here: executing any file (so ``subprocess.run(['id'])`` fails even where a binary is visible),
writing anywhere but the scratch directory, reading beyond Python, rlmlab and a few /etc and /dev files, TCP
bind and connect (ABI 4+), and signals or abstract unix sockets towards processes outside the worker (ABI 6+).
The restriction cannot be lifted by the process or its children. Stdlib only: the worker imports this module
before anything else of rlmlab.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
from collections.abc import Iterable

__all__ = ["landlock_abi", "confine_self", "apply_rlimits", "seal_host_tree", "drop_capabilities",
           "forbid_new_processes"]

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on x86_64 and arm64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_REMOVE_DIR, _REMOVE_FILE, _MAKE_CHAR, _MAKE_DIR, _MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
_MAKE_SOCK, _MAKE_FIFO, _MAKE_BLOCK, _MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
_REFER, _TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE  # the rights a rule on a file (not a dir) may hold
_READ = _READ_FILE | _READ_DIR
_WRITE = (_WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE_DIR | _MAKE_REG | _MAKE_SOCK | _MAKE_FIFO | _MAKE_SYM
          | _REFER | _TRUNCATE)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is __attribute__((packed)): 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _syscall(number: int, *args: object) -> int:
    return _libc.syscall(ctypes.c_long(number), *args)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0 when Landlock is missing, disabled or the platform is not Linux)."""
    try:
        abi = _syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (AttributeError, OSError):
        return 0
    return max(int(abi), 0)


def _handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    return rights


def confine_self(read: Iterable[str], write: Iterable[str], *, network: bool = False) -> int:
    """Restrict this process and its future children for good: ``read`` paths readable, ``write`` paths
    readable and writable, nothing executable, no TCP unless ``network`` (ABI 4+), no signals or abstract
    unix sockets outside (ABI 6+). Paths that do not exist are skipped. Returns the ABI used; raises OSError
    when Landlock is unavailable or refuses the ruleset (the caller decides whether that is fatal)."""
    abi = landlock_abi()
    if abi < 1:
        raise OSError("Landlock is not available in this kernel")
    handled = _handled_fs(abi)
    attr = _RulesetAttr(handled, 0, 0)
    size = 8
    if abi >= 4 and not network:
        attr.handled_access_net, size = _NET_BIND_TCP | _NET_CONNECT_TCP, 16
    if abi >= 6:
        attr.scoped, size = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL, 24
    ruleset = _syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        for paths, rights in ((read, _READ), (write, _READ | _WRITE)):
            for path in paths:
                _add_rule(ruleset, path, rights & handled)
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if _syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)
    return abi


def _add_rule(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # not on this machine (/lib64 on arm64): nothing to grant
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS
        rule = _PathBeneathAttr(rights, fd)
        if _syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                    ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


def apply_rlimits(limits: dict[str, int]) -> None:
    """Set each ``RLIMIT_<NAME>`` soft and hard limit (``{"AS": bytes, "CPU": seconds, "NPROC": n, "FSIZE":
    bytes, "NOFILE": n, "CORE": bytes}``), never above the current hard limit. A file over FSIZE fails with
    EFBIG instead of killing the worker."""
    for name, value in limits.items():
        which = getattr(resource, f"RLIMIT_{name}")
        _, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))
    if "FSIZE" in limits:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


_SYS_MOUNT_SETATTR = 442
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID, _MOUNT_ATTR_NODEV = 0x1, 0x2, 0x4
_AT_FDCWD, _AT_RECURSIVE = -100, 0x8000
_MS_BIND, _MS_REC = 4096, 16384
_PR_CAPBSET_READ, _PR_CAPBSET_DROP = 23, 24


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64), ("propagation", ctypes.c_uint64),
                ("userns_fd", ctypes.c_uint64)]


def _mount_setattr(path: str, attr_set: int, attr_clr: int, flags: int) -> None:
    attr = _MountAttr(attr_set, attr_clr, 0, 0)
    if _syscall(_SYS_MOUNT_SETATTR, ctypes.c_int(_AT_FDCWD), path.encode(), ctypes.c_uint(flags), ctypes.byref(attr),
                ctypes.c_size_t(ctypes.sizeof(attr))) != 0:
        raise OSError(ctypes.get_errno(), f"mount_setattr {path}: {os.strerror(ctypes.get_errno())}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = (lambda s: None if s is None else s.encode())
    if _libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        raise OSError(ctypes.get_errno(), f"mount {target}: {os.strerror(ctypes.get_errno())}")


def seal_host_tree(scratch: str, fresh: Iterable[str], tmpfs_bytes: int) -> None:
    """For a worker that sees the host's file tree (``unshare`` in its own user and mount namespaces, root there):
    make every mount read-only (Linux 5.12+), put fresh size-capped tmpfs over ``fresh`` (/tmp, /run, /dev/shm:
    where other programs' unix sockets live, which Landlock does not cover) and bind ``scratch`` back writable.
    Mounts stay private to the worker's namespace. Raises OSError when the kernel refuses."""
    fd = os.open(scratch, os.O_PATH | os.O_DIRECTORY)
    try:
        _mount_setattr("/", _MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID | _MOUNT_ATTR_NODEV, 0, _AT_RECURSIVE)
        for path in fresh:
            if os.path.isdir(path) and not os.path.islink(path):
                _mount("tmpfs", path, "tmpfs", 0, f"size={tmpfs_bytes},mode=1777")
        os.makedirs(scratch, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", scratch, None, _MS_BIND)
        _mount_setattr(scratch, 0, _MOUNT_ATTR_RDONLY, 0)
        os.chdir(scratch)  # the cwd still pointed into the directory as mounted before (now read-only or hidden)
    finally:
        os.close(fd)


def drop_capabilities(uid: int | None = None, gid: int | None = None) -> None:
    """Drop every capability (bounding, effective, permitted, inheritable): what a user namespace's root holds
    is gone for this process and its children. With ``uid`` (a worker started as the host's root, in no user
    namespace), become that user and group first, with no supplementary groups, so that what it creates is not
    root's on the host. Raises OSError when the kernel refuses."""
    for cap in range(64):
        if _libc.prctl(_PR_CAPBSET_READ, cap, 0, 0, 0) != 1:  # not held (bwrap --cap-drop ALL), or no such cap
            continue
        if _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"prctl(PR_CAPBSET_DROP, {cap})")
    if uid is not None:  # after the bounding set (dropping it needs CAP_SETPCAP, which a non-root user lacks)
        group = uid if gid is None else gid
        os.setgroups([])
        os.setresgid(group, group, group)
        os.setresuid(uid, uid, uid)  # from root to another user: the kernel clears every capability set
        if os.getuid() != uid or os.geteuid() != uid or os.getgid() != group:
            raise OSError(f"could not become uid {uid}")

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header, data = Header(0x20080522, 0), (Data * 2)()  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words
    if _libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


# seccomp: new processes are refused (threads are not); on x86_64 and arm64, the architectures whose numbers are here
_SECCOMP_ARCH = {"x86_64": (0xC000003E, {"fork": 57, "vfork": 58, "clone": 56, "clone3": 435, "unshare": 272,
                                          "setns": 308}),
                 "aarch64": (0xC00000B7, {"clone": 220, "clone3": 435, "unshare": 97, "setns": 268})}
# Syscalls that set a file's mode: (number, the mode's argument, the flags' argument when the mode counts only with
# O_CREAT or O_TMPFILE). A mode with the setuid or setgid bit fails with EPERM: the worker's files in scratch are
# the host's files too.
_MODE_CALLS = {"x86_64": ((2, 2, 1), (85, 1, None), (83, 1, None), (90, 1, None), (91, 1, None), (257, 3, 2),
                          (258, 2, None), (268, 2, None), (452, 2, None)),
               "aarch64": ((56, 3, 2), (34, 2, None), (52, 1, None), (53, 2, None), (452, 2, None))}
_SET_ID_BITS, _CREATING = 0o6000, 0o100 | 0o20000000  # S_ISUID | S_ISGID; O_CREAT | O_TMPFILE
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _ENOSYS = 1, 38
_CLONE_THREAD = 0x00010000
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def forbid_new_processes() -> bool:
    """Install a seccomp filter: fork, vfork, unshare, setns and clone without CLONE_THREAD fail with EPERM, as does
    setting a setuid or setgid bit (chmod, mkdir, creat, open with O_CREAT), clone3 with ENOSYS
    (so the C library creates threads with clone), syscalls of another ABI (i386, x32) with EPERM. Bounds a fork
    storm where RLIMIT_NPROC does not (it never applies to the host's root). False on an architecture without a
    table here; OSError when the kernel refuses."""
    arch = _SECCOMP_ARCH.get(os.uname().machine)
    if arch is None:
        return False
    audit_arch, nr = arch
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    deny, allow, nosys = _RET_ERRNO | _EPERM, _RET_ALLOW, _RET_ERRNO | _ENOSYS
    # unshare and setns too: a worker that is no user namespace's root (started by the host's root) could
    # otherwise make a user namespace of its own
    refused = [nr[n] for n in ("fork", "vfork", "unshare", "setns") if n in nr]
    # instructions as (code, jt, jf, k); jumps are relative to the next instruction
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, audit_arch), (ret, 0, 0, deny), (ld, 0, 0, 0),
            (jge, 0, 1, 0x40000000), (ret, 0, 0, deny)]
    for n in refused:
        prog += [(jeq, 0, 1, n), (ret, 0, 0, deny)]
    for number, mode_arg, flags_arg in _MODE_CALLS.get(os.uname().machine, ()):
        mode = [(ld, 0, 0, 16 + 8 * mode_arg), (jset, 0, 1, _SET_ID_BITS), (ret, 0, 0, deny)]
        flags = [] if flags_arg is None else [(ld, 0, 0, 16 + 8 * flags_arg), (jset, 0, len(mode), _CREATING)]
        prog += [(ld, 0, 0, 0), (jeq, 0, len(flags) + len(mode), number), *flags, *mode]
    prog += [(ld, 0, 0, 0),  # the syscall's number again: a mode check above may have loaded an argument
             (jeq, 0, 1, nr["clone3"]), (ret, 0, 0, nosys),
             (jeq, 0, 3, nr["clone"]), (ld, 0, 0, 16), (jset, 1, 0, _CLONE_THREAD), (ret, 0, 0, deny),
             (ret, 0, 0, allow)]
    filters = (_SockFilter * len(prog))(*[_SockFilter(*ins) for ins in prog])
    fprog = _SockFprog(len(prog), filters)
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"seccomp filter: {os.strerror(ctypes.get_errno())}")
    return True
