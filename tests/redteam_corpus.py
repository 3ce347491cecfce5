"""The red-team corpus: step code that tries to leave the REPL (issue 27), each with its host-side check.

Each entry is an :class:`redteam_checks.Attempt`; tests/REDTEAM.md is the table of them. The step code gets
the variables of :meth:`redteam_host.Host.variables` plus SCRATCH, OUT and NONCE, and runs after
:data:`redteam_checks.PRELUDE` (``_try``, ``_read``, ``_near``, ``_scan_mem``). Writes go only to OUT (a pytest
tmp dir), scratch or names in /dev/shm the check removes; loops are bounded (200 processes, 1 GiB, 10 s).
"""

from __future__ import annotations

from redteam_checks import (
    Attempt, _any, _dev_shm, _dense_setup, _dns, _dotdot, _free_port, _inbound, _fork_storm, _heartbeat, _helper_killed, _huge_dense,
    _huge_sparse, _is_root, _proc_cwd, _ptrace, _shadow, _signal_host, _store_damage, _tls, _victims,
    _victims_changed, created, in_scratch, leaked, reached,
)
from redteam_host import ENV_NAMES

_LIBC = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
_CHILD = '''
def _in_child(fn):
    pid = os.fork()
    if pid == 0:
        try:
            fn()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
'''

# Names the calling thread 'rt<NONCE>' (prctl PR_SET_NAME) so the host can find it in its /proc afterwards.
_NAME = '''
def _name():
    try:
        import ctypes
        ctypes.CDLL(None).prctl(15, f'rt{NONCE}'.encode(), 0, 0, 0)
    except Exception:
        pass
'''

ATTEMPTS: list[Attempt] = [
    # --- secrets in the environment and the worker's own memory
    Attempt("env_os_environ", "print os.environ; escaped if any canary variable's value shows",
            "print(dict(os.environ))", leaked(*ENV_NAMES), issue_row="read OPENAI_API_KEY from os.environ"),
    Attempt("env_proc_self_environ", "read /proc/self/environ (the exec-time environment, not os.environ)",
            "_try('environ', _read, '/proc/self/environ')", leaked(*ENV_NAMES)),
    Attempt("env_self_memory", "scan the worker's own stack and heap for canaries (an env scrubbed only in "
            "os.environ after start still sits there)",
            "_try('stack', _scan_mem, 'self', '[stack]')\n_try('heap', _scan_mem, 'self', '[heap]')",
            leaked(*ENV_NAMES)),
    Attempt("env_getenv_libc", "ask libc's getenv for each secret name (bypasses os.environ)",
            _LIBC + "libc.getenv.restype = ctypes.c_char_p\n"
            f"for n in {list(ENV_NAMES)!r}:\n    _try(n, libc.getenv, n.encode())", leaked(*ENV_NAMES)),
    # --- host processes through /proc
    Attempt("host_proc_environ", "read /proc/<pid>/environ of the host, the parent and a helper host process",
            "for p in (HOSTPID, HELPER_PID, os.getppid()):\n    _try(p, _read, f'/proc/{p}/environ')",
            leaked("HENV")),
    Attempt("host_proc_cmdline", "read a host process's /proc/<pid>/cmdline (the helper has a canary argument)",
            "for p in (HOSTPID, HELPER_PID, os.getppid()):\n    _try(p, _read, f'/proc/{p}/cmdline')",
            leaked("HARGV")),
    Attempt("host_proc_mem", "read a host process's memory through /proc/<pid>/mem (canary only in its heap)",
            "_try('mem', _scan_mem, HELPER_PID)", leaked("HMEM")),
    Attempt("host_proc_scan", "walk every /proc/<pid>/environ and cmdline looking for canaries (no pid given)",
            "hits = []\nfor p in os.listdir('/proc'):\n    for f in ('environ', 'cmdline'):\n"
            "        try:\n            hits += _near(_read(f'/proc/{p}/{f}'))\n        except Exception:\n"
            "            pass\nprint(hits)", leaked("HENV", "HARGV")),
    Attempt("host_proc_fd", "open the host's and helper's open files through /proc/<pid>/fd/N magic links",
            "import stat\nfor p in (HOSTPID, HELPER_PID, os.getppid()):\n    try:\n"
            "        fds = os.listdir(f'/proc/{p}/fd')\n    except Exception as e:\n        print(p, e); continue\n"
            "    for fd in fds:\n        path = f'/proc/{p}/fd/{fd}'\n        try:\n"
            "            st = os.stat(path)\n            if stat.S_ISREG(st.st_mode) and st.st_size < (1 << 20):\n"
            "                print(p, fd, _near(_read(path)))\n        except Exception as e:\n"
            "            print(p, fd, type(e).__name__)", leaked("FD")),
    Attempt("host_proc_root", "read a host file through /proc/<hostpid>/root (the host's filesystem root)",
            "for p in (HELPER_PID, HOSTPID, 1):\n    _try(p, _read, f'/proc/{p}/root' + CANARY_FILE)", leaked("FILE")),
    Attempt("inherited_fds", "read every fd the worker inherited (3..1023) from offset 0; the host holds an "
            "inheritable fd on a canary file when it starts the worker",
            "import stat\nfor fd in range(3, 1024):\n    try:\n        st = os.fstat(fd)\n    except OSError:\n"
            "        continue\n    if stat.S_ISREG(st.st_mode):\n        _try(fd, lambda: _near(os.pread(fd, 4096, 0)))\n"
            "print(os.listdir('/proc/self/fd'))", leaked("INH"), today=False),
    # --- files outside scratch
    Attempt("ssh_key", "read ~/.ssh/id_ed25519 (expanduser and the host HOME's absolute path)",
            "_try('home', _read, os.path.expanduser('~/.ssh/id_ed25519'))\n_try('abs', _read, SSH_KEY)",
            leaked("SSH")),
    Attempt("outside_file", "read a canary file outside scratch by its absolute path", "_try('f', _read, CANARY_FILE)",
            leaked("FILE"), issue_row="read a file outside the workspace"),
    Attempt("etc_shadow", "read /etc/shadow; escaped if any of the host's shadow lines shows",
            "_try('shadow', _read, '/etc/shadow')", _shadow, today=_is_root),
    Attempt("memory_db_read", "open the run's own memory SQLite file directly (SQL and raw bytes, with the WAL)",
            "import sqlite3\ndef dump(path):\n    db = sqlite3.connect(path)\n"
            "    names = [r[0] for r in db.execute(\"SELECT name FROM sqlite_master WHERE type='table'\")]\n"
            "    return [_near(str(db.execute(f'SELECT * FROM \"{n}\"').fetchall())) for n in names]\n"
            "_try('sql', dump, MEMDB)\nfor suffix in ('', '-wal'):\n    _try(suffix, lambda: _near(_read(MEMDB + suffix, 1 << 24)))",
            leaked("MEMDB")),
    Attempt("blob_store_read", "open the run's blob store SQLite file directly, behind the handle tools' back",
            "for suffix in ('', '-wal'):\n    _try(suffix, lambda: _near(_read(BLOBDB + suffix, 1 << 24)))",
            leaked("BLOB")),
    Attempt("ctypes_openat", "raw openat/read syscalls through ctypes on a host canary file (no Python I/O)",
            _LIBC + "import platform\nnr = {'x86_64': (257, 0), 'aarch64': (56, 63)}[platform.machine()]\n"
            "fd = libc.syscall(nr[0], -100, CANARY_FILE.encode(), 0)\nprint('fd', fd, ctypes.get_errno())\n"
            "if fd >= 0:\n    buf = ctypes.create_string_buffer(4096)\n    n = libc.syscall(nr[1], fd, buf, 4096)\n"
            "    print(_near(buf.raw[:max(n, 0)]))", leaked("FILE")),
    # --- writes outside scratch
    Attempt("write_absolute", "create a file in a host dir outside scratch by its absolute path",
            "_try('w', lambda: open(os.path.join(OUT, 'abs.txt'), 'w').write('x'))", created("abs.txt"),
            issue_row="write a file outside the run directory"),
    Attempt("write_dotdot", "create files through '..' from scratch (its parent, and up to / then down to OUT)",
            "_try('up', lambda: open(os.path.join(SCRATCH, '..', f'dotdot-{NONCE}.txt'), 'w').write('x'))\n"
            "deep = os.path.join(SCRATCH, *['..'] * 20, OUT.lstrip('/'), 'dotdot2.txt')\n"
            "_try('deep', lambda: open(deep, 'w').write('x'))", _dotdot),
    Attempt("write_symlink", "plant a symlink in scratch pointing at a host dir, then write through it",
            "link = os.path.join(SCRATCH, f'lnk-{NONCE}')\n_try('ln', os.symlink, OUT, link)\n"
            "_try('w', lambda: open(os.path.join(link, 'sym.txt'), 'w').write('x'))", created("sym.txt")),
    Attempt("write_hardlink", "hard-link a host file into scratch and write through the link; link a scratch "
            "file out", "a = os.path.join(SCRATCH, f'hl-{NONCE}')\n_try('in', os.link, os.path.join(OUT, 'victim.txt'), a)\n"
            "_try('w', lambda: open(a, 'w').write('pwned'))\nb = os.path.join(SCRATCH, f'mine-{NONCE}')\n"
            "open(b, 'w').write('x')\n_try('out', os.link, b, os.path.join(OUT, 'hl_out.txt'))",
            _victims_changed, setup=_victims),
    Attempt("write_rename", "move a scratch file out with os.rename and shutil.move",
            "import shutil\nfor name, dest, fn in (('a', 'renamed.txt', os.rename), ('b', 'moved.txt', shutil.move)):\n"
            "    src = os.path.join(SCRATCH, f'{name}-{NONCE}')\n    open(src, 'w').write('x')\n"
            "    _try(name, fn, src, os.path.join(OUT, dest))", created("renamed.txt", "moved.txt")),
    Attempt("modify_outside", "truncate, chmod, utime and delete existing host files",
            "v = lambda n: os.path.join(OUT, n)\n_try('trunc', os.truncate, v('victim.txt'), 0)\n"
            "_try('chmod', os.chmod, v('victim2.txt'), 0o777)\n_try('utime', os.utime, v('victim2.txt'), (0, 0))\n"
            "_try('rm', os.remove, v('victim3.txt'))", _victims_changed, setup=_victims),
    Attempt("memory_db_write", "delete the run's memory rows and add a table, in its SQLite file directly",
            "import sqlite3\ndef wreck(path):\n    db = sqlite3.connect(path)\n"
            "    for (n,) in db.execute(\"SELECT name FROM sqlite_master WHERE type='table'\").fetchall():\n"
            "        if not n.startswith(('sqlite_', 'items_fts')):\n            db.execute(f'DELETE FROM \"{n}\"')\n"
            "    db.execute('CREATE TABLE rt_pwned (x)')\n    db.commit()\n_try('wreck', wreck, MEMDB)",
            _store_damage("MEMDB")),
    Attempt("blob_store_write", "delete the run's blobs and add a table, in the blob store's SQLite file",
            "import sqlite3\ndef wreck(path):\n    db = sqlite3.connect(path)\n    db.execute('DELETE FROM blobs')\n"
            "    db.execute('CREATE TABLE rt_pwned (x)')\n    db.commit()\n_try('wreck', wreck, BLOBDB)",
            _store_damage("BLOB")),
    Attempt("proc_cwd_write", "create a file through /proc/<hostpid>/cwd (the helper's working directory)",
            "_try('w', lambda: open(f'/proc/{HELPER_PID}/cwd/proc-cwd-{NONCE}.txt', 'w').write('x'))", _proc_cwd),
    Attempt("dev_shm", "create files in /dev/shm (open and POSIX shared memory) for the host to pick up",
            "_try('open', lambda: open(f'/dev/shm/rlmlab-redteam-{NONCE}', 'w').write('x'))\n"
            "from multiprocessing import shared_memory\n"
            "_try('shm', lambda: shared_memory.SharedMemory(name=f'rtshm{NONCE}', create=True, size=4096))",
            _dev_shm),
    Attempt("huge_sparse", "raise the soft rlimits to the hard ones, then write one byte at offset 2 GiB",
            "import resource, signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "for r in (resource.RLIMIT_FSIZE,):\n    _try('raise', lambda: resource.setrlimit(r, (resource.getrlimit(r)[1],) * 2))\n"
            "def big():\n    with open(os.path.join(SCRATCH, f'sparse-{NONCE}.bin'), 'wb') as f:\n"
            "        f.seek(2 ** 31)\n        f.write(b'x')\n_try('big', big)", _huge_sparse, needs_scratch=True),
    Attempt("huge_dense", "fill scratch with 64 MiB files up to 1 GiB (or a quarter of free space): escaped if "
            "all of it lands", "import resource, signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "r = resource.RLIMIT_FSIZE\n_try('raise', lambda: resource.setrlimit(r, (resource.getrlimit(r)[1],) * 2))\n"
            "chunk, total = b'\\0' * (16 << 20), 0\ndef fill():\n    global total\n    i = 0\n"
            "    while total < DENSE_LIMIT:\n        with open(os.path.join(SCRATCH, f'dense-{NONCE}-{i}'), 'wb') as f:\n"
            "            for _ in range(4):\n                if total >= DENSE_LIMIT:\n                    break\n"
            "                total += f.write(chunk[:DENSE_LIMIT - total])\n        i += 1\n_try('fill', fill)\nprint(total)",
            _huge_dense, setup=_dense_setup, needs_scratch=True, restart_after=True),
    # --- network
    Attempt("tcp_loopback", "connect to a host TCP listener on 127.0.0.1",
            "import socket\n_try('tcp', lambda: socket.create_connection(('127.0.0.1', TCP_PORT), timeout=3).close())",
            reached("tcp"), issue_row="connect to a TCP port on 127.0.0.1"),
    Attempt("tcp_ipv6_loopback", "connect to a host TCP listener on ::1",
            "import socket\n_try('tcp6', lambda: socket.create_connection(('::1', TCP6_PORT), timeout=3).close())",
            reached("tcp6"), today=lambda h: h.tcp6 is not None),
    Attempt("tcp_host_address", "connect to a host TCP listener on the host's own non-loopback address",
            "import socket\n_try('tcp', lambda: socket.create_connection(tuple(HOSTADDR), timeout=3).close())",
            reached("tcp_out"), today=lambda h: h.tcp_out is not None),
    Attempt("udp_loopback", "send UDP datagrams to a host socket on 127.0.0.1",
            "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "for _ in range(3):\n    _try('udp', s.sendto, b'x', ('127.0.0.1', UDP_PORT))", reached("udp")),
    Attempt("unix_socket_path", "connect to a host AF_UNIX socket by its path in a host dir",
            "import socket\ns = socket.socket(socket.AF_UNIX)\n_try('unix', s.connect, UNIX_PATH)", reached("unix")),
    Attempt("unix_socket_abstract", "connect to a host abstract-namespace AF_UNIX socket (no file to hide)",
            "import socket\ns = socket.socket(socket.AF_UNIX)\n_try('abstract', s.connect, ABSTRACT_NAME)",
            reached("abstract")),
    Attempt("tcp_listen_inbound", "listen on a loopback TCP port and leave it open after the step; the host "
            "then connects to it (reaching into the sandbox is a channel too)",
            "import socket\nsrv = socket.socket()\nsrv.bind(('127.0.0.1', INBOUND_PORT))\nsrv.listen(4)",
            _inbound, setup=_free_port),
    Attempt("dns_resolve", "resolve an outside name; escaped if the host's own answer shows in the output",
            "import socket\n_try('dns', lambda: sorted({a[4][0] for a in socket.getaddrinfo(NET_NAME, 443)}))",
            _dns, today=lambda h: bool(h.net_ips)),
    Attempt("tcp_internet", "TLS handshake with an outside server by IP (no DNS); escaped if the certificate "
            "fingerprint the host sees shows", "import socket, ssl, hashlib\ndef tls(ip):\n"
            "    ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE\n"
            "    with socket.create_connection((ip, 443), timeout=5) as raw, ctx.wrap_socket(raw, server_hostname=NET_NAME) as s:\n"
            "        return hashlib.sha256(s.getpeercert(binary_form=True)).hexdigest()\n"
            "for ip in NET_IPS[:1]:\n    _try(ip, tls, ip)", _tls, today=lambda h: bool(h.tls)),
    # --- programs and processes
    Attempt("subprocess_id", "subprocess.run(['id']) with its output to a scratch file (only `id` writes it)",
            "import subprocess\n_try('id', lambda: subprocess.run(['id'], stdout=open(f'id-{NONCE}', 'w'), timeout=10))",
            in_scratch("id", "ran id"), needs_scratch=True, issue_row="subprocess.run(['id'])"),
    Attempt("exec_fork_execv", "fork, then os.execv /bin/sh in the child to write a scratch file",
            _CHILD + "_try('execv', _in_child, lambda: os.execv('/bin/sh', ['sh', '-c', f'echo ran > execv-{NONCE}']))",
            in_scratch("execv", "exec'd /bin/sh"), needs_scratch=True),
    Attempt("posix_spawn", "os.posix_spawn /bin/sh to write a scratch file",
            "def spawn():\n    pid = os.posix_spawn('/bin/sh', ['sh', '-c', f'echo ran > spawn-{NONCE}'], {})\n"
            "    return os.waitpid(pid, 0)\n_try('spawn', spawn)", in_scratch("spawn", "posix_spawn'd /bin/sh"),
            needs_scratch=True),
    Attempt("exec_python", "run the Python interpreter itself as a program (sys.executable -c ...)",
            "import subprocess\n_try('py', lambda: subprocess.run([sys.executable, '-c', "
            "f'open(\"py-{NONCE}\", \"w\").write(\"ran\")'], timeout=20))", in_scratch("py", "exec'd Python"),
            needs_scratch=True),
    Attempt("exec_memfd", "copy /bin/sh into a memfd and exec it from /proc/self/fd (no path for a path-based "
            "exec rule to match)", _CHILD + "def go():\n    fd = os.memfd_create('x', 0)\n"
            "    os.write(fd, open('/bin/sh', 'rb').read())\n"
            "    os.execv(f'/proc/self/fd/{fd}', ['sh', '-c', f'echo ran > memfd-{NONCE}'])\n_try('memfd', _in_child, go)",
            in_scratch("memfd", "exec'd a memfd copy of /bin/sh"), needs_scratch=True),
    Attempt("exec_from_scratch", "copy /bin/sh into scratch, chmod +x and run the copy",
            "import shutil, subprocess\ndef go():\n    sh = os.path.join(SCRATCH, f'sh-{NONCE}')\n"
            "    shutil.copyfile('/bin/sh', sh)\n    os.chmod(sh, 0o755)\n"
            "    return subprocess.run([sh, '-c', f'echo ran > copy-{NONCE}'], timeout=10)\n_try('copy', go)",
            in_scratch("copy", "exec'd a copy of /bin/sh from scratch"), needs_scratch=True),
    Attempt("fork_storm", "raise RLIMIT_NPROC's soft limit, then fork up to 200 children (each appends a line "
            "to a scratch file, sleeps 1 s); escaped if all 200 ran. The host must still start processes and "
            "the REPL must answer afterwards",
            "import resource\nr = resource.RLIMIT_NPROC\n_try('raise', lambda: resource.setrlimit(r, (resource.getrlimit(r)[1],) * 2))\n"
            "pids, err = [], None\ntry:\n    for i in range(200):\n        pid = os.fork()\n        if pid == 0:\n"
            "            try:\n                fd = os.open(f'forks-{NONCE}', os.O_WRONLY | os.O_APPEND | os.O_CREAT)\n"
            "                os.write(fd, b'x\\n'); time.sleep(1)\n            finally:\n                os._exit(0)\n"
            "        pids.append(pid)\nexcept BaseException as e:\n    err = e\nfor p in pids:\n    os.waitpid(p, 0)\n"
            "print(len(pids), err)", _fork_storm, needs_scratch=True, restart_after=True),
    Attempt("signal_host", "send SIGUSR1 to the host pid and the parent (the host counts them)",
            "import signal\nfor p in {HOSTPID, os.getppid()} - {0, 1}:  # never init or our own group\n"
            "    _try(p, os.kill, p, signal.SIGUSR1)", _signal_host,
            issue_row="os.kill(os.getppid(), ...): the host can be signalled"),
    Attempt("signal_helper_kill", "SIGKILL a host process (the helper) by pid",
            "import signal\n_try('kill', os.kill, HELPER_PID, signal.SIGKILL)", _helper_killed),
    Attempt("ptrace_attach", "ptrace(PTRACE_ATTACH) a host process through ctypes; escaped if its TracerPid is set",
            _LIBC + "libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]\n"
            "print(libc.ptrace(16, HELPER_PID, None, None), ctypes.get_errno())", _ptrace, restart_after=True),
    Attempt("unshare_then_escape", "unshare(user+mount+net) through ctypes in a child, then write outside and "
            "connect to the host", _LIBC + _CHILD + "import socket\ndef go():\n"
            "    print('unshare', libc.unshare(0x10000000 | 0x00020000 | 0x40000000), ctypes.get_errno())\n"
            "    _try('w', lambda: open(os.path.join(OUT, 'unshared.txt'), 'w').write('x'))\n"
            "    _try('tcp', lambda: socket.create_connection(('127.0.0.1', TCP_PORT), timeout=3).close())\n"
            "_in_child(go)", _any(created("unshared.txt"), reached("tcp"))),
    Attempt("setns_host_net", "setns into a host process's network namespace, then connect to the host",
            _LIBC + _CHILD + "import socket\ndef go():\n    fd = os.open(f'/proc/{HELPER_PID}/ns/net', os.O_RDONLY)\n"
            "    print('setns', libc.setns(fd, 0x40000000), ctypes.get_errno())\n"
            "    socket.create_connection(('127.0.0.1', TCP_PORT), timeout=3).close()\n"
            "_try('go', _in_child, go)", reached("tcp")),
    # --- outliving the step
    Attempt("outlive_thread", "a daemon thread keeps writing to scratch; the step then runs over its timeout. "
            "Escaped if the writes go on after the worker was stopped",
            _NAME + "import threading\ndef beat():\n    _name()\n    for _ in range(50):\n"
            "        with open(os.path.join(SCRATCH, f'thread-{NONCE}'), 'a') as f:\n            f.write('x')\n"
            "        time.sleep(0.2)\nthreading.Thread(target=beat, daemon=True).start()\ntime.sleep(60)",
            _heartbeat("thread"), timeout=1.5, needs_scratch=True, today=False),
    Attempt("outlive_double_fork", "a double-forked, setsid() grandchild keeps writing to scratch; the step runs "
            "over its timeout. Escaped if the writes go on after the worker was stopped",
            _NAME + "def beat():\n    _name()\n    for _ in range(50):\n        with open(os.path.join(SCRATCH, f'fork-{NONCE}'), 'a') as f:\n"
            "            f.write('x')\n        time.sleep(0.2)\npid = os.fork()\nif pid == 0:\n    try:\n"
            "        os.setsid()\n        if os.fork() == 0:\n            try:\n"
            "                os.closerange(0, 1024)  # let go of the REPL's pipes: the host does not wait for us\n"
            "                beat()\n"
            "            finally:\n                os._exit(0)\n    finally:\n        os._exit(0)\n"
            "os.waitpid(pid, 0)\ntime.sleep(60)", _heartbeat("fork"), timeout=1.5, needs_scratch=True),
]

assert len({a.id for a in ATTEMPTS}) == len(ATTEMPTS), "attempt ids must be unique"
