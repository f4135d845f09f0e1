#!/usr/bin/env python3
"""tools/kafka/broker.py - a real, throwaway Apache Kafka broker for sluice's tests.

Starts a single-node KRaft Kafka (broker and controller in one JVM) that
listens on 127.0.0.1 only, from jars that Maven fetches from Maven Central
(see pom.xml beside this file; the Kafka version is pinned there).  Standard
library only.

As a library:

    from broker import KafkaBroker
    with KafkaBroker() as kafka:           # start() ... stop()
        kafka.create_topic("events", partitions=3)
        run_something(kafka.bootstrap)     # "127.0.0.1:PORT"
        kafka.halt(); kafka.resume()       # away for a while, back on the same
                                           # ports with the same data

As a command:

    python3 tools/kafka/broker.py fetch              # only fetch the jars
    python3 tools/kafka/broker.py start [--dir D] [--topic NAME[:PARTITIONS]]...
                                                     # run until Ctrl-C

Environment:
    SLUICE_KAFKA_JARS  folder for the jars (default: tools/kafka/.jars)
    JAVA_HOME / JAVA   which java to run (default: `java` on PATH)
    MVN                which mvn to run (default: `mvn` on PATH)
"""

from __future__ import annotations

import argparse
import atexit
import base64
import fcntl
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"
DEFAULT_JARS_DIR = HERE / ".jars"

# JVM options.  The broker gets a small heap (the machines have 2 cores and
# tests run several things at once); the short-lived tools (StorageTool,
# TopicCommand) additionally skip the optimising JIT, which makes them start
# noticeably faster.
BROKER_JVM_OPTS = ["-Xms64m", "-Xmx512m", "-XX:+UseG1GC", "-Djava.awt.headless=true"]
TOOL_JVM_OPTS = ["-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                 "-Djava.awt.headless=true"]

# Everything goes to stdout, which is redirected into the log file.
LOG4J_PROPERTIES = """\
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.org.apache.kafka.clients=WARN
log4j.logger.kafka.tools=WARN
log4j.logger.org.apache.kafka.tools=WARN
"""


# --------------------------------------------------------------------------
# Fetching the jars
# --------------------------------------------------------------------------

def _pom_digest() -> str:
    """Hash of pom.xml: a jar folder fetched for another pom is stale."""
    return hashlib.sha256(POM.read_bytes()).hexdigest()


def jars_dir() -> Path:
    return Path(os.environ.get("SLUICE_KAFKA_JARS", DEFAULT_JARS_DIR)).resolve()


def fetch_jars(dest: Path | None = None, quiet: bool = False) -> Path:
    """Make sure DEST holds the broker's jars; run mvn if it does not.

    Maven keeps its own cache in ~/.m2, so a refetch after `rm -rf .jars`
    costs only a copy.  The folder is filled under a lock and swapped in
    whole, so concurrent callers and interrupted fetches are safe.
    """
    dest = (dest or jars_dir()).resolve()
    stamp = dest / ".pom-sha256"
    digest = _pom_digest()
    if stamp.is_file() and stamp.read_text().strip() == digest:
        return dest

    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest.parent / (dest.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.is_file() and stamp.read_text().strip() == digest:
            return dest  # another process fetched them while we waited
        tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=dest.parent))
        try:
            cmd = [os.environ.get("MVN", "mvn"), "-q", "-B", "-Dstyle.color=never",
                   "-f", str(POM), "dependency:copy-dependencies",
                   "-DincludeScope=runtime", f"-DoutputDirectory={tmp}"]
            if not quiet:
                print("kafka: fetching jars:", " ".join(cmd), file=sys.stderr)
            res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True)
            if res.returncode != 0 or not list(tmp.glob("kafka_2.13-*.jar")):
                raise RuntimeError(f"mvn failed to fetch the Kafka jars "
                                   f"(exit {res.returncode}):\n{res.stdout[-4000:]}")
            (tmp / ".pom-sha256").write_text(digest + "\n")
            if dest.exists():
                shutil.rmtree(dest)
            tmp.rename(dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


# --------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------

def _java() -> str:
    if os.environ.get("JAVA"):
        return os.environ["JAVA"]
    if os.environ.get("JAVA_HOME"):
        return str(Path(os.environ["JAVA_HOME"]) / "bin" / "java")
    return "java"


def _free_port() -> int:
    """A port on 127.0.0.1 that is free right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cluster_id() -> str:
    """A Kafka cluster id: 16 random bytes, url-safe base64, no padding."""
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):  # Kafka avoids these too (look like flags)
            return cid


def _die_with_parent() -> None:
    """preexec_fn: ask Linux to SIGTERM the child if this process dies.

    A safety net for a test runner that is SIGKILLed, where neither the
    context manager nor atexit get to run.
    """
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:  # not Linux, or no libc: the net is optional
        pass


def _tail(path: Path, lines: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as e:
        return f"(no log: {e})"


# --------------------------------------------------------------------------
# The broker
# --------------------------------------------------------------------------

class KafkaBroker:
    """One single-node KRaft Kafka on 127.0.0.1, in its own JVM.

    workdir: where server.properties, the data and broker.log go; a fresh
             temporary folder (removed by stop()) when None.  A given folder
             is kept, but its data/ is wiped first.
    auto_create_topics: the broker's auto.create.topics.enable.
    overrides: extra server.properties entries.
    startup_timeout: seconds to wait for the broker to answer.
    """

    def __init__(self, workdir: str | os.PathLike | None = None, *,
                 auto_create_topics: bool = False,
                 overrides: dict[str, object] | None = None,
                 startup_timeout: float = 120.0):
        self._given_workdir = Path(workdir).resolve() if workdir else None
        self.auto_create_topics = auto_create_topics
        self.overrides = dict(overrides or {})
        self.startup_timeout = startup_timeout
        self.workdir: Path | None = None
        self.jars: Path | None = None
        self.port: int | None = None
        self.controller_port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.startup_seconds: float | None = None  # JVM launch -> ready
        self._logf = None

    # -- public API --------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        if self.port is None:
            raise RuntimeError("broker not started")
        return f"127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        assert self.workdir is not None
        return self.workdir / "broker.log"

    def start(self) -> "KafkaBroker":
        if self.proc is not None:
            raise RuntimeError("broker already started")
        atexit.register(self.stop)
        try:
            self.jars = fetch_jars()
            if self._given_workdir:
                self.workdir = self._given_workdir
                self.workdir.mkdir(parents=True, exist_ok=True)
                shutil.rmtree(self.workdir / "data", ignore_errors=True)
            else:
                self.workdir = Path(tempfile.mkdtemp(prefix="sluice-kafka-"))
            # The ports are free when picked but could be taken before the JVM
            # binds them; on such a clash, try again with new ones.
            for attempt in range(3):
                self.port, self.controller_port = _free_port(), _free_port()
                while self.controller_port == self.port:
                    self.controller_port = _free_port()
                self._write_config()
                self._format_storage()
                self._launch()
                try:
                    self._wait_ready()
                    return self
                except _PortClash:
                    self._kill()
                    shutil.rmtree(self.workdir / "data", ignore_errors=True)
            raise RuntimeError("Kafka could not bind its ports after 3 tries")
        except Exception as e:
            # stop() removes the log with the temp folder: show its tail now.
            tail = _tail(self.log_path) if self.workdir is not None else "(no log)"
            print(f"kafka: startup failed: {e}\n--- tail of broker.log ---\n{tail}",
                  file=sys.stderr)
            self.stop()
            raise RuntimeError(f"{e}\n--- tail of broker.log ---\n{tail}") from e
        except BaseException:  # KeyboardInterrupt, SystemExit
            self.stop()
            raise

    def create_topic(self, name: str, partitions: int = 1,
                     config: dict[str, object] | None = None,
                     timeout: float = 60.0) -> None:
        """Create NAME and wait until every partition has a leader."""
        cmd = ["--bootstrap-server", self.bootstrap, "--create", "--topic", name,
               "--partitions", str(partitions), "--replication-factor", "1"]
        for k, v in (config or {}).items():
            cmd += ["--config", f"{k}={v}"]
        res = self._run_tool("org.apache.kafka.tools.TopicCommand", cmd, timeout=timeout)
        if res.returncode != 0:
            raise RuntimeError(f"creating topic {name!r} failed "
                               f"(exit {res.returncode}):\n{res.stdout}")
        self._wait_topic(name, partitions, timeout)

    def halt(self, kill: bool = False) -> None:
        """Stop the JVM (SIGTERM, or SIGKILL with kill) but keep its ports, its
        data and its configuration, so that resume() brings the same broker
        back: a broker that goes away for a while."""
        if self.proc is None:
            raise RuntimeError("broker not running")
        if kill:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._kill()

    def resume(self) -> "KafkaBroker":
        """Start the halted broker again on the same ports and data."""
        if self.proc is not None:
            raise RuntimeError("broker already running")
        if self.port is None or self.workdir is None:
            raise RuntimeError("broker was never started")
        atexit.register(self.stop)
        self._launch()
        self._wait_ready()
        return self

    def stop(self) -> None:
        """Stop the JVM (SIGTERM, then SIGKILL) and remove the temp folder.

        Safe to call more than once and after a failed start().
        """
        atexit.unregister(self.stop)
        self._kill()
        if self.workdir is not None and self._given_workdir is None:
            shutil.rmtree(self.workdir, ignore_errors=True)
        self.workdir = None
        self.port = self.controller_port = None

    def __enter__(self) -> "KafkaBroker":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- internals ---------------------------------------------------------

    def _write_config(self) -> None:
        assert self.workdir is not None
        props = {
            # One node that is both the KRaft controller and the broker.
            "process.roles": "broker,controller",
            "node.id": 1,
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": (f"PLAINTEXT://127.0.0.1:{self.port},"
                          f"CONTROLLER://127.0.0.1:{self.controller_port}"),
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.workdir / "data"),
            # A single node: every internal topic has one replica.
            "offsets.topic.replication.factor": 1,
            "offsets.topic.num.partitions": 1,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
            "transaction.state.log.num.partitions": 1,
            "min.insync.replicas": 1,
            "default.replication.factor": 1,
            "num.partitions": 1,
            # Fast and small, for tests.
            "group.initial.rebalance.delay.ms": 0,
            "num.network.threads": 2,
            "num.io.threads": 2,
            "background.threads": 2,
            "auto.create.topics.enable": str(self.auto_create_topics).lower(),
            "delete.topic.enable": "true",
        }
        props.update(self.overrides)
        text = "".join(f"{k}={v}\n" for k, v in props.items())
        (self.workdir / "server.properties").write_text(text)
        (self.workdir / "log4j.properties").write_text(LOG4J_PROPERTIES)

    def _classpath(self) -> str:
        assert self.jars is not None
        return str(self.jars / "*")

    def _log4j_opt(self) -> str:
        assert self.workdir is not None
        return f"-Dlog4j.configuration=file:{self.workdir / 'log4j.properties'}"

    def _run_tool(self, main_class: str, args: list[str],
                  timeout: float = 60.0) -> subprocess.CompletedProcess:
        """Run a short-lived Kafka command-line class; output in .stdout."""
        cmd = [_java(), *TOOL_JVM_OPTS, self._log4j_opt(), "-cp", self._classpath(),
               main_class, *args]
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout, preexec_fn=_die_with_parent)

    def _format_storage(self) -> None:
        assert self.workdir is not None
        res = self._run_tool("kafka.tools.StorageTool",
                             ["format", "-t", _cluster_id(),
                              "-c", str(self.workdir / "server.properties")])
        if res.returncode != 0:
            raise RuntimeError(f"kafka.tools.StorageTool format failed "
                               f"(exit {res.returncode}):\n{res.stdout}")

    def _launch(self) -> None:
        assert self.workdir is not None
        cmd = [_java(), *BROKER_JVM_OPTS, self._log4j_opt(),
               f"-Dkafka.logs.dir={self.workdir}",
               "-cp", self._classpath(), "kafka.Kafka",
               str(self.workdir / "server.properties")]
        self._logf = open(self.log_path, "ab")
        self._t_launch = time.monotonic()
        # Own session: a Ctrl-C in the terminal reaches only us, and we stop
        # the broker in order.
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._logf,
                                     stderr=subprocess.STDOUT, cwd=self.workdir,
                                     start_new_session=True,
                                     preexec_fn=_die_with_parent)

    def _answers_metadata(self) -> bool:
        """Does the broker answer a metadata request, listing itself?"""
        if shutil.which("kcat"):
            try:
                res = subprocess.run(["kcat", "-b", self.bootstrap, "-L", "-m", "3"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, timeout=10)
            except subprocess.TimeoutExpired:
                return False
            return res.returncode == 0 and f"127.0.0.1:{self.port}" in res.stdout
        # Without kcat: the port accepts connections and the log says so.
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            return False
        return "Kafka Server started" in self.log_path.read_text(errors="replace")

    def _wait_ready(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = self.log_path.read_text(errors="replace")
                if "Address already in use" in log:
                    raise _PortClash()
                raise RuntimeError(f"Kafka exited during startup "
                                   f"(exit {self.proc.returncode})")
            if self._answers_metadata():
                self.startup_seconds = time.monotonic() - self._t_launch
                return
            time.sleep(0.3)
        raise RuntimeError(f"Kafka did not answer on {self.bootstrap} within "
                           f"{self.startup_timeout:.0f}s")

    def _wait_topic(self, name: str, partitions: int, timeout: float) -> None:
        """Wait until metadata shows NAME with PARTITIONS partitions, all led."""
        if not shutil.which("kcat"):
            return  # TopicCommand returns once the controller has created it
        deadline = time.monotonic() + timeout
        out = ""
        while time.monotonic() < deadline:
            res = subprocess.run(["kcat", "-b", self.bootstrap, "-L", "-t", name, "-m", "5"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, timeout=15)
            out = res.stdout
            led = sum(1 for line in out.splitlines()
                      if line.strip().startswith("partition ") and "leader 1," in line)
            if res.returncode == 0 and f"with {partitions} partitions" in out \
                    and led == partitions:
                return
            time.sleep(0.2)
        raise RuntimeError(f"topic {name!r} not ready within {timeout:.0f}s:\n{out}")

    def _kill(self, grace: float = 30.0) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        if self._logf is not None:
            self._logf.close()
            self._logf = None


class _PortClash(Exception):
    """The JVM could not bind a port we picked: retry with new ones."""


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------

def _topic_arg(s: str) -> tuple[str, int]:
    name, _, n = s.partition(":")
    return name, int(n or 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("fetch", help="only fetch the jars (via mvn) and print their folder")
    sp = sub.add_parser("start", help="run a broker in the foreground until Ctrl-C")
    sp.add_argument("--dir", help="keep config, data and broker.log here "
                                  "(default: a temporary folder, removed at exit)")
    sp.add_argument("--topic", action="append", default=[], type=_topic_arg,
                    metavar="NAME[:PARTITIONS]", help="create this topic (repeatable)")
    sp.add_argument("--auto-create-topics", action="store_true",
                    help="set auto.create.topics.enable=true")
    args = ap.parse_args(argv)

    if args.cmd == "fetch":
        print(fetch_jars())
        return 0

    def on_sigterm(signum, frame):
        raise KeyboardInterrupt  # SIGTERM stops the broker just like Ctrl-C

    signal.signal(signal.SIGTERM, on_sigterm)
    broker = KafkaBroker(args.dir, auto_create_topics=args.auto_create_topics)
    try:
        broker.start()
        for name, partitions in args.topic:
            broker.create_topic(name, partitions)
            print(f"kafka: created topic {name} ({partitions} partitions)", file=sys.stderr)
        print(f"kafka: ready in {broker.startup_seconds:.1f}s, log {broker.log_path}",
              file=sys.stderr)
        print(broker.bootstrap, flush=True)
        while broker.proc is not None and broker.proc.poll() is None:
            time.sleep(0.5)
        print(f"kafka: broker exited unexpectedly (exit {broker.proc.returncode}); "
              f"tail of {broker.log_path}:\n{_tail(broker.log_path)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        broker.stop()


if __name__ == "__main__":
    sys.exit(main())
