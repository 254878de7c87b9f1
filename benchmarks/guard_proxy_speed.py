"""What `sopbench guard proxy` adds to each tool call over stdio, against the same server called directly.

Two copies of one small MCP server (written with the SDK: this file run with ``--serve``) run side by
side: one called directly, one behind ``sopbench guard proxy --sop`` with a rule (``act`` needs
``check`` answered true for the same ``x``). A client writes JSON-RPC lines and reads the answers,
one call at a time, alternating the two paths call by call so that both see the same machine load.
Allowed calls (``act``, after one ``check``) travel to the server and back both ways; the proxy adds
reading and writing the lines twice, the guard's check and its record, and the decision log line.
The conversation grows by one call per allowed call, so the last ones are judged after thousands of
earlier calls. Refused calls never reach the server; their time is shown too. It prints p50 and p99
of each path, the difference (what the proxy adds) and whether the target (p99 added <= 2 ms) holds.

Usage: python benchmarks/guard_proxy_speed.py [--calls 2000] [--json]   (needs the extra mcp)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

TARGET_MS = 2.0
SOP = {
    "rules": [{"action": "act", "params": ["x"], "constraints": ["single", "check", {"x": "x"}]}],
}


def serve() -> None:
    from mcp.server.mcpserver import MCPServer

    app = MCPServer("bench")

    @app.tool()
    def check(x: int) -> bool:
        return True

    @app.tool()
    def act(x: int) -> str:
        return f"done {x}"

    app.run()


class Client:
    """A JSON-RPC client on a process's pipes: one request, one answer."""

    def __init__(self, command: list[str], stderr: IO[bytes] | int) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        self.next_id = 0
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        }
        self.request("initialize", init)
        self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self._write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.process.stdout is not None
        while True:
            answer = json.loads(self.process.stdout.readline())
            if answer.get("id") == self.next_id:
                return answer

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        started = time.perf_counter()
        answer = self.request("tools/call", {"name": tool, "arguments": arguments})
        return (time.perf_counter() - started) * 1e3, answer

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(calls: int, folder: Path) -> dict[str, Any]:
    sop = folder / "sop.json"
    sop.write_text(json.dumps(SOP))
    server = [sys.executable, __file__, "--serve"]
    proxy_cmd = [
        sys.executable,
        "-m",
        "sopbench.cli",
        "guard",
        "proxy",
        "--sop",
        str(sop),
        "--log",
        str(folder / "log.jsonl"),
        "--",
        *server,
    ]
    with open(folder / "stderr.txt", "wb") as stderr:
        direct, proxied = Client(server, stderr), Client(proxy_cmd, stderr)
        for client in (direct, proxied):
            client.call("check", {"x": 1})
            for _ in range(50):  # warm up
                client.call("act", {"x": 1})
        times: dict[str, list[float]] = {"direct": [], "proxy": [], "refused": []}
        for i in range(calls):
            ms, answer = direct.call("act", {"x": 1})
            times["direct"].append(ms)
            ms, answer = proxied.call("act", {"x": 1})
            assert answer["result"].get("isError") is not True, answer
            times["proxy"].append(ms)
            if i % 4 == 0:
                ms, answer = proxied.call("act", {"x": 2})  # x=2 was never checked
                assert answer["result"]["isError"] is True, answer
                times["refused"].append(ms)
        direct.close()
        proxied.close()
    guard_ms = [
        line["guard_ms"]
        for line in map(json.loads, (folder / "log.jsonl").read_text().splitlines())
        if "guard_ms" in line
    ]
    figures: dict[str, Any] = {"calls": calls, "load_average": os.getloadavg(), "cores": os.cpu_count()}
    for name, values in times.items():
        figures[f"{name}_p50_ms"] = percentile(values, 0.5)
        figures[f"{name}_p99_ms"] = percentile(values, 0.99)
    figures["guard_check_p99_ms"] = percentile(guard_ms, 0.99)
    figures["added_p50_ms"] = figures["proxy_p50_ms"] - figures["direct_p50_ms"]
    figures["added_p99_ms"] = figures["proxy_p99_ms"] - figures["direct_p99_ms"]
    figures["history_at_end"] = calls + 51
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="allowed calls on each path")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    with tempfile.TemporaryDirectory() as folder:
        figures = measure(args.calls, Path(folder))
    if args.json:
        print(json.dumps(figures))
        return
    load = figures["load_average"]
    print(
        f"guard proxy speed: {figures['calls']} allowed calls per path, alternating; "
        f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {figures['cores']} cores"
    )
    print(f"{'path':>24} {'p50 ms':>8} {'p99 ms':>8}")
    print(f"{'direct (baseline)':>24} {figures['direct_p50_ms']:>8.3f} {figures['direct_p99_ms']:>8.3f}")
    print(f"{'through the proxy':>24} {figures['proxy_p50_ms']:>8.3f} {figures['proxy_p99_ms']:>8.3f}")
    print(f"{'refused by the proxy':>24} {figures['refused_p50_ms']:>8.3f} {figures['refused_p99_ms']:>8.3f}")
    print(f"{'added by the proxy':>24} {figures['added_p50_ms']:>8.3f} {figures['added_p99_ms']:>8.3f}")
    print(
        f"the guard's check inside the proxy: p99 {figures['guard_check_p99_ms']:.3f} ms at up to {figures['history_at_end']:,} earlier calls"
    )
    verdict = "ok" if figures["added_p99_ms"] <= TARGET_MS else "MISSED"
    print(f"target: p99 added <= {TARGET_MS} ms: {figures['added_p99_ms']:.3f} ms {verdict}")


if __name__ == "__main__":
    main()
