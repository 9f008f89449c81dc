"""Shared helpers of the bench harnesses: find the binaries, start a server pinned (or not) and
wait for its port, measure a process's CPU from /proc, run a client and collect its rusage,
parse the floor programs' key=value lines, percentiles, medians and markdown tables.

Standard library only (python3 on the machine, no pip packages). Every process the harnesses
start has its own time limit and is stopped by its pid, never by name.
"""

import json
import math
import os
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
SERVER_CPU = "1"  # taskset CPU list for servers when pinned
CLIENT_CPU = "0"  # and for clients


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Paths:
    """Where the binaries are: <build>/servebench and <build>/bench/floor_*."""

    def __init__(self, build_dir):
        self.build = os.path.abspath(build_dir)
        self.servebench = os.path.join(self.build, "servebench")
        self.floor_sse_server = os.path.join(self.build, "bench", "floor_sse_server")
        self.floor_reader = os.path.join(self.build, "bench", "floor_reader")
        self.floor_pacer = os.path.join(self.build, "bench", "floor_pacer")

    def require(self, *names):
        missing = [n for n in names if not os.access(getattr(self, n), os.X_OK)]
        if missing:
            raise SystemExit("error: not built in %s: %s (cmake --build %s --target %s)" % (
                self.build, ", ".join(missing), self.build,
                " ".join(os.path.basename(getattr(self, n)) for n in missing)))


# With --fifo (set_fifo), servers and clients run at SCHED_FIFO (needs CAP_SYS_NICE): on a machine
# shared with other work, that work then no longer decides when a client is woken, which
# otherwise batches its events for it (docs/performance.md, "Against servebench sim").
_fifo = [False]


def set_fifo(on):
    _fifo[0] = on


def pin_prefix(pinned, cpu):
    fifo = ["chrt", "-f", "20" if cpu == CLIENT_CPU else "10"] if _fifo[0] else []
    return fifo + (["taskset", "-c", cpu] if pinned else [])


_next_port = [18000 + (os.getpid() % 500) * 20]


def free_port():
    """A port that is free now on 127.0.0.1 (walks a per-harness range; skips busy ones)."""
    for _ in range(1000):
        _next_port[0] += 1
        p = _next_port[0]
        s = socket.socket()
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", p))
            return p
        except OSError:
            continue
        finally:
            s.close()
    raise SystemExit("error: no free port on 127.0.0.1")


def wait_port(port, proc, timeout_s=20.0):
    t_end = time.monotonic() + timeout_s
    while time.monotonic() < t_end:
        if proc.poll() is not None:
            raise RuntimeError("server exited with %s before listening on %d" % (proc.returncode, port))
        s = socket.socket()
        try:
            s.settimeout(0.2)
            s.connect(("127.0.0.1", port))
            return
        except OSError:
            time.sleep(0.05)
        finally:
            s.close()
    raise RuntimeError("server did not listen on 127.0.0.1:%d within %.0f s" % (port, timeout_s))


def proc_cpu_ns(pid):
    """On-CPU time of every live thread of pid, in ns (sum of /proc/<pid>/task/*/schedstat), and
    utime+stime of the whole process in ns (/proc/<pid>/stat, clock-tick resolution)."""
    sched = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    sched += int(f.read().split()[0])
            except OSError:
                pass
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    except OSError:
        return None
    return {"sched_ns": sched, "stat_ns": ticks * 1_000_000_000 // CLK_TCK}


def machine_busy():
    """(busy, steal, total) jiffies of the whole machine from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    busy = v[0] + v[1] + v[2] + v[5] + v[6]
    return busy, v[7], sum(v[:8])


class Server:
    """A server process (floor_sse_server or servebench sim), pinned or not, on a fresh port."""

    def __init__(self, argv, port, pinned, log_path, env=None):
        self.port = port
        self.log_path = log_path
        self.log = open(log_path, "w")
        full = pin_prefix(pinned, SERVER_CPU) + argv
        self.cmd = " ".join(shlex.quote(a) for a in full)
        self.proc = subprocess.Popen(full, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env)
        wait_port(port, self.proc)

    def cpu(self):
        return proc_cpu_ns(self.proc.pid)

    def stop(self, timeout_s=15):
        """SIGTERM (then SIGKILL) to this pid only; returns the server's output."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        with open(self.log_path) as f:
            return f.read()

    def wait_exit(self, timeout_s):
        """For servers that exit by themselves (floor_sse_server once its clients leave)."""
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            pass
        return self.stop()


def run_client(argv, pinned, timeout_s, log_path=None):
    """Runs a client to completion; returns (rc, output, rusage cpu seconds user, sys, wall s)."""
    full = pin_prefix(pinned, CLIENT_CPU) + argv
    out = open(log_path, "w") if log_path else subprocess.PIPE
    t0 = time.monotonic()
    proc = subprocess.Popen(full, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = t0 + timeout_s
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            pid, status, ru = os.wait4(proc.pid, 0)
            break
        time.sleep(0.01)
    wall = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if log_path:
        out.close()
        with open(log_path) as f:
            text = f.read()
    else:
        text = proc.stdout.read().decode(errors="replace")
    return {"rc": proc.returncode, "out": text, "user_s": ru.ru_utime, "sys_s": ru.ru_stime,
            "wall_s": wall, "maxrss_kb": ru.ru_maxrss, "cmd": " ".join(shlex.quote(a) for a in full),
            "timed_out": wall >= timeout_s}


def kv_line(text, prefix):
    """The key=value pairs of the last line starting with prefix (floor programs' output)."""
    found = None
    for line in text.splitlines():
        if line.startswith(prefix):
            found = line
    if found is None:
        return None
    d = {}
    for tok in found[len(prefix):].split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            try:
                d[k] = float(v)
            except ValueError:
                d[k] = v
    return d


def pct(sorted_vals, p):
    """Nearest-rank percentile of a sorted list (same rule as the floor programs)."""
    if not sorted_vals:
        return float("nan")
    k = max(1, min(len(sorted_vals), int(math.ceil(p / 100.0 * len(sorted_vals) - 1e-9))))
    return sorted_vals[k - 1]


def pcts_us(vals_ns, ps=(50, 99, 99.9)):
    v = sorted(vals_ns)
    return {p: pct(v, p) / 1e3 for p in ps} | {"n": len(v), "max": (v[-1] / 1e3 if v else float("nan"))}


def median(vals):
    vals = [v for v in vals if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return statistics.median(vals) if vals else float("nan")


def fmt(v, digits=2):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if isinstance(v, str):
        return v
    if abs(v) >= 1000:
        return "%.0f" % v
    return ("%." + str(digits) + "f") % v


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join(fmt(c) if not isinstance(c, str) else c for c in r) + " |")
    return "\n".join(lines) + "\n"


def verdict(ratio, target):
    if ratio is None or (isinstance(ratio, float) and math.isnan(ratio)):
        return "not measured"
    return "met" if ratio <= target else "NOT met"


def machine_info():
    def sh(cmd):
        try:
            return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=10).stdout.strip()
        except Exception:  # noqa: BLE001 - a label only
            return "?"
    return {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "kernel": sh("uname -sr"),
        "cpu": sh("lscpu | sed -n 's/^Model name: *//p'"),
        "cpus": os.cpu_count(),
        "hypervisor": sh("lscpu | sed -n 's/^Hypervisor vendor: *//p'"),
        "clocksource": sh("cat /sys/devices/system/clocksource/clocksource0/current_clocksource"),
        "loadavg_at_start": sh("cat /proc/loadavg"),
        "git": sh("git -C %s rev-parse --short HEAD" % shlex.quote(os.path.dirname(os.path.abspath(__file__)))),
    }


def read_jsonl(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def save_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, default=str)
