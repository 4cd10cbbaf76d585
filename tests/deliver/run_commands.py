"""Runs the verification commands of issue texts on the CPU, each in its own namespace
(issue 46 item 4): ``python run_commands.py OUT.json FILE.md...``. Writes, per command, the
file, its index, the exception type it raised (None) and what it printed."""

import contextlib
import io
import json
import re
import signal
import sys


def _alarm(signum, frame):
    raise TimeoutError("command ran past 60 s")


def main(out, files):
    signal.signal(signal.SIGALRM, _alarm)
    results = []
    for path in files:
        text = open(path, encoding="utf-8").read()
        # the blocks under each "验证命令" line, up to the next heading (code the docs check
        # quotes from the vendor's docs is no command)
        chunks = re.findall(r"^验证命令.*?(?=^#)", text, re.S | re.M)
        blocks = [b for c in chunks for b in re.findall(r"```python\n(.*?)```", c, re.S)]
        for i, block in enumerate(blocks):
            code = re.sub(r"([\"'])npu\1", r"\1cpu\1", block)  # "device 改为实际设备": here the CPU
            buf = io.StringIO()
            error = None
            signal.alarm(60)
            try:
                with contextlib.redirect_stdout(buf):
                    exec(compile(code, f"{path}#{i}", "exec"), {"__name__": "__command__"})
            except BaseException as exc:  # noqa: BLE001 - every failure is the answer
                error = type(exc).__name__
            finally:
                signal.alarm(0)
            results.append({"file": path, "index": i, "code": block, "error": error, "printed": buf.getvalue()})
    with open(out, "w", encoding="utf-8") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
