"""tests/kafka/test_kafka_roundtrip.py - the test Kafka broker really works.

Starts a real single-node Kafka (tools/kafka/broker.py), creates a topic with
3 partitions, produces 1,000 distinct keyed messages with `kcat -P` and reads
them all back with `kcat -C -e -o beginning`.  Nothing here is skipped: a
broker that cannot start, or a missing kcat, is a failure.
"""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "kafka"))

from broker import KafkaBroker  # noqa: E402

N_MESSAGES = 1000
PARTITIONS = 3


@pytest.fixture(scope="module")
def kafka():
    t0 = time.monotonic()
    broker = KafkaBroker()
    try:
        broker.start()
        print(f"\nkafka: {broker.bootstrap} ready in {time.monotonic() - t0:.1f}s "
              f"(JVM launch to ready {broker.startup_seconds:.1f}s)")
        yield broker
    finally:
        broker.stop()


def kcat(*args, input=None, timeout=60):
    """Run kcat; fail the test (never skip) if it is missing or fails."""
    assert shutil.which("kcat"), "kcat is not installed (Debian package kcat)"
    res = subprocess.run(["kcat", *args], input=input, capture_output=True,
                         text=True, timeout=timeout)
    assert res.returncode == 0, f"kcat {' '.join(args)} failed:\n{res.stderr}"
    return res


def test_roundtrip_1000_messages(kafka):
    topic = "roundtrip"
    kafka.create_topic(topic, partitions=PARTITIONS)

    # Distinct keys spread the messages over all partitions (keyless messages
    # would stick to one partition per batch in librdkafka).
    sent = {(f"k{i}", f"message-{i:04d}-payload") for i in range(N_MESSAGES)}
    lines = "".join(f"{k}\t{v}\n" for k, v in sorted(sent))
    kcat("-b", kafka.bootstrap, "-t", topic, "-P", "-K", "\t",
         "-X", "acks=all", input=lines)

    res = kcat("-b", kafka.bootstrap, "-t", topic, "-C", "-e", "-o", "beginning",
               "-q", "-f", "%p\t%k\t%s\n")
    got, partitions_seen = [], set()
    for line in res.stdout.splitlines():
        p, k, v = line.split("\t")
        partitions_seen.add(int(p))
        got.append((k, v))

    assert len(got) == N_MESSAGES, f"consumed {len(got)} messages, sent {N_MESSAGES}"
    assert set(got) == sent
    assert partitions_seen == set(range(PARTITIONS))
