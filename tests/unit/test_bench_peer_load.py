"""The pure parts of the peer comparison (`graphmem.bench.peer_mem0`: mem0 replies mapped back to
LoCoMo message ids, recall per budget, the ratio table) and of the load test
(`graphmem.bench.load`: the per-level summary, error names, the table), without mem0 or a
graphmem server; the load test's client against a small recording server; and the one-line
errors of `bench locomo --peer` and `bench load`."""

from __future__ import annotations

import http.server
import importlib.util
import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

import pytest
from typer.testing import CliRunner

from graphmem.bench import load, peer_mem0
from graphmem.cli import app
from tests.support.http_peer import serving


def test_mem0_replies_map_back_to_message_ids_in_order() -> None:
    reply = {"results": [
        {"id": "u1", "memory": "Ana: hi", "metadata": {"message_id": "conv-1/D1:3"}},
        {"id": "u2", "memory": "no id", "metadata": {}},
        {"id": "u3", "memory": "none", "metadata": None},
        {"id": "u4", "memory": "Ben: yo", "metadata": {"message_id": "conv-1/D2:1"}},
    ]}
    assert peer_mem0.message_ids(reply) == ["conv-1/D1:3", "conv-1/D2:1"]
    assert peer_mem0.message_ids({}) == []


def test_recall_at_each_budget_is_graphmems_scorer_on_a_prefix() -> None:
    ranked = [f"c/D1:{i}" for i in range(1, 60)]
    got = peer_mem0.recall_at(("D1:2", "D1:7", "D1:30"), ranked)
    assert got == {5: pytest.approx(1 / 3), 10: pytest.approx(2 / 3), 20: pytest.approx(2 / 3),
                   50: 1.0}


def _side(recall: float, p50: float, ingest: float) -> dict[str, object]:
    return {"recall": {b: recall for b in ("5", "10", "20", "50")},
            "latency_ms": {"p50": p50, "p95": p50 * 2}, "ingest_messages_per_s": ingest}


def test_comparison_gives_graphmem_over_peer_ratios() -> None:
    rows = peer_mem0.comparison(_side(0.6, 20.0, 100.0), _side(0.4, 10.0, 0.0))
    assert rows["recall@5"] == {"graphmem": 0.6, "peer": 0.4, "ratio": pytest.approx(1.5)}
    assert rows["search_p50_ms"]["ratio"] == pytest.approx(2.0)
    assert rows["search_p95_ms"] == {"graphmem": 40.0, "peer": 20.0, "ratio": 2.0}
    assert rows["ingest_messages_per_s"]["ratio"] is None  # the peer's figure is 0
    text = peer_mem0.table("mem0", rows, ["dense only"])
    assert "recall@50" in text and "   1.50" in text and "dense only" in text
    assert text.splitlines()[-2].rstrip().endswith("-")  # no ratio for ingest


def test_notes_say_when_bm25_is_off() -> None:
    result = {"version": "2.2.1", "search": "dense only", "bm25": False,
              "memory_text": "speaker: text", "latency_ms": {"k": 10}, "network_calls": 0}
    notes = peer_mem0.notes(result)
    assert any("BM25 is off" in n for n in notes)
    assert notes[-1].endswith(": 0")


def test_load_summary_and_error_names() -> None:
    s = load.summarize([10.0] * 98 + [50.0, 100.0], {"http_503": 2, "ReadTimeout": 1}, 10.0)
    assert s["requests"] == 100 and s["per_s"] == 10.0 and s["error_count"] == 3
    assert s["p50_ms"] == 10.0 and s["p99_ms"] > 50.0
    assert s["errors"] == {"ReadTimeout": 1, "http_503": 2}
    empty = load.summarize([], {}, 5.0)
    assert empty["per_s"] == 0.0 and empty["p95_ms"] is None
    assert load.error_kind(500) == "http_500"
    assert load.error_kind(None, TimeoutError()) == "TimeoutError"


def test_load_table_lists_each_level_and_its_errors() -> None:
    level = {"clients": 8, "search": load.summarize([20.0, 30.0], {"http_500": 1}, 1.0),
             "write": load.summarize([], {}, 1.0), "cpu_cores": {"api": 0.9, "neo4j": None},
             "cpu_ms_per_request": {"api": 12.5}}
    text = load.table([level])
    assert "search/s" in text.splitlines()[0]
    assert "search http_500 x1" in text
    assert "12.50" in text


def test_cpu_accounting_reads_this_process() -> None:
    if not Path("/proc").is_dir():
        pytest.skip("no /proc on this system: CPU accounting reports None there")
    assert (load.cpu_seconds([1 << 30]) or 0.0) == 0.0  # a pid that does not exist counts 0
    assert load.cpu_seconds([load.os.getpid()]) is not None
    assert load.os.getpid() in load.process_tree(load.os.getpid())


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers a POST with the status its path names (``/s/503``), noting what came; ``/bye``
    answers 200 and closes the connection."""

    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[tuple[str, str | None, object]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append((self.path, self.headers.get("Authorization"), body))
        status = int(self.path.rsplit("/", 1)[1]) if "/s/" in self.path else 200
        self.send_response(status)
        self.send_header("Content-Length", "2")
        if self.path.endswith("/bye"):
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _recording_server() -> Iterator[str]:
    with serving(_Recorder) as port:
        yield f"http://127.0.0.1:{port}/base"


def test_load_client_posts_json_with_the_key_and_survives_a_closed_connection() -> None:
    _Recorder.seen.clear()
    with _recording_server() as url:
        client = load.Client(url, "gm_k")
        assert client.post("/v1/search", {"query": "q"}) == 200
        assert client.post("/s/503", {}) == 503
        assert client.post("/bye", {}) == 200  # the server closes: the next request reconnects
        assert client.post("/v1/search", {"query": "again"}) == 200
        client.close()
    assert _Recorder.seen[0] == ("/base/v1/search", "Bearer gm_k", {"query": "q"})
    assert [s[0] for s in _Recorder.seen] == ["/base/v1/search", "/base/s/503", "/base/bye",
                                              "/base/v1/search"]


def test_load_requests_tally_successes_statuses_and_failures() -> None:
    tally = load.Tally()
    with _recording_server() as url:
        client = load.Client(url, "k")
        load._request(client, tally, "/v1/search", {})
        load._request(client, tally, "/s/500", {})
        client.close()
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    load._request(load.Client(f"http://127.0.0.1:{port}", "k"), tally, "/v1/search", {})
    assert len(tally.latencies_ms) == 1
    assert tally.errors == {"http_500": 1, "ConnectionRefusedError": 1}


def test_peer_must_be_mem0_and_load_levels_must_be_numbers(tmp_path: Path) -> None:
    data = tmp_path / "l.json"
    data.write_text("[]")
    r = CliRunner().invoke(app, ["bench", "locomo", "--data", str(data), "--peer", "zep"])
    assert r.exit_code == 2 and "mem0" in r.output
    r = CliRunner().invoke(app, ["bench", "load", "--data", str(data), "--clients", "1,x"])
    assert r.exit_code == 2 and "--clients" in r.output


def test_missing_mem0_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mem0" else real(name, *a))
    with pytest.raises(peer_mem0.PeerUnavailable, match=r"pip install 'graphmem\[peer\]'"):
        peer_mem0.require()
    monkeypatch.undo()  # mem0ai is in the dev extra: next, the embedder is checked
    with pytest.raises(peer_mem0.PeerUnavailable, match="GRAPHMEM_EMBEDDER=minilm"):
        peer_mem0.require("e5-small-v2")


def test_the_offline_guard_refuses_and_counts_other_connections() -> None:
    original = socket.socket.connect
    guard = peer_mem0._Guard({("127.0.0.1", 1)})
    with guard.active(), socket.socket() as s, pytest.raises(ConnectionRefusedError):
        s.connect(("127.0.0.1", 9))
    assert guard.refused == ["127.0.0.1:9"]
    assert socket.socket.connect is original  # put back on leaving
