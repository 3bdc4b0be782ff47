"""`mediagen mcp --mock` driven by an independent client: the `mcp` Python SDK
(pinned by scripts/mcp-check.sh). Lists the tools, generates through to a saved
file (with progress), hits the spending cap, and times out a call (the SDK then
cancels it) and retries it, which must give the same generation, charged once.
Each session ends with the mock's verdict on the server's traffic, which must be
clean.

Usage: python client_check.py PATH/TO/mediagen
"""

import asyncio
import sys
import tempfile
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

BIN = sys.argv[1]


def check(condition, what):
    if not condition:
        raise SystemExit(f"client_check: FAILED: {what}")
    print(f"client_check: ok: {what}")


async def session(args, logs=None):
    """A client session with `mediagen --mock mcp ARGS`, as a context manager."""

    async def on_log(params):
        if logs is not None:
            logs.append(params)

    server = StdioServerParameters(command=BIN, args=["--mock", "mcp", *args])
    return stdio_client(server), on_log


async def verdict_is_clean(client):
    verdict = await client.call_tool("mock_verdict", {})
    check(verdict.structured_content["clean"], f"the mock's verdict is clean: {verdict.structured_content}")


async def tools_and_a_saved_file():
    out = Path(tempfile.mkdtemp())
    transport, on_log = await session(["--output-dir", str(out)])
    async with transport as (read, write), ClientSession(read, write, logging_callback=on_log) as client:
        await client.initialize()
        names = {tool.name for tool in (await client.list_tools()).tools}
        check(
            {"list_models", "estimate_cost", "generate", "get_generation", "get_balance", "mock_verdict"} <= names,
            f"the tools are listed: {sorted(names)}",
        )
        progress = []

        async def on_progress(value, total, message):
            progress.append((value, total, message))

        result = await client.call_tool(
            "generate",
            {"model": "flux-schnell", "prompt": "a lighthouse at dusk", "requestId": "py-file"},
            progress_callback=on_progress,
        )
        check(not result.is_error, "generate succeeds")
        done = result.structured_content
        check(done["status"] == "SUCCEEDED" and done["costRub"] > 0, "it returns the status and the cost charged")
        links = [c for c in result.content if c.type == "resource_link"]
        check(len(links) == 1 and links[0].uri.startswith("file://"), "the saved file comes as a resource link")
        saved = Path(done["files"][0]["path"])
        check(saved.parent == out.resolve() and saved.stat().st_size > 0, f"the file is saved under --output-dir: {saved}")
        check(len(progress) >= 1 and done["id"] in progress[0][2], "progress was notified, naming the generation")
        await verdict_is_clean(client)


async def the_cap():
    transport, on_log = await session(["--max-spend", "5"])
    async with transport as (read, write), ClientSession(read, write, logging_callback=on_log) as client:
        await client.initialize()
        for n in range(2):
            result = await client.call_tool("generate", {"model": "flux-schnell", "prompt": f"fox {n}", "requestId": f"cap-{n}"})
            check(not result.is_error, f"generate {n + 1} of 2 within --max-spend 5 succeeds")
        refused = await client.call_tool("generate", {"model": "flux-schnell", "prompt": "fox 3", "requestId": "cap-3"})
        error = refused.structured_content["error"]
        check(
            refused.is_error and error["code"] == "SPENDING_CAP_REACHED" and error["details"]["capLeftRub"] == 0,
            f"the third is refused as a tool error saying what is left: {error['message']}",
        )
        await verdict_is_clean(client)


async def a_timed_out_call_retried():
    logs = []
    transport, on_log = await session([], logs)
    async with transport as (read, write), ClientSession(read, write, logging_callback=on_log) as client:
        await client.initialize()
        arguments = {"model": "kling-2-1", "prompt": "waves on a shore", "requestId": "py-retry"}
        try:
            await client.call_tool("generate", arguments, read_timeout_seconds=0.5)
            check(False, "the call outlasts a 0.5 s time-out")
        except MCPError as err:
            check("timed out" in str(err), f"the call times out on the client: {err}")
        # The client cancelled the call; the server says which generation goes on.
        for _ in range(100):
            if logs:
                break
            await asyncio.sleep(0.05)
        check(logs and logs[0].data.get("id"), f"the cancelled call's generation id is logged: {logs[:1]}")
        abandoned = logs[0].data["id"]
        again = await client.call_tool("generate", arguments)
        check(not again.is_error and again.structured_content["id"] == abandoned, "the retry returns the same generation")
        balance = (await client.call_tool("get_balance", {})).structured_content
        check(balance["cap"]["chargedRub"] == again.structured_content["costRub"], "and it is charged once")
        await verdict_is_clean(client)


async def main():
    await tools_and_a_saved_file()
    await the_cap()
    await a_timed_out_call_retried()


asyncio.run(main())
