"""The `--jq` table (cli/tests/jq/filters.json) run through jq itself.

Each row names a recorded answer and a filter. `expected` is what `mediagen --jq`
prints (the CLI's unit test `jq::tests::every_filter_of_the_table` checks that);
this script checks that jq prints the same, or, for a row marked `differs`, what
the row's `jq` says it prints. So the only differences from jq are the ones the
table documents. A `.jsonl` answer is a stream: the filter runs on each line.

    python compare.py TABLE_DIR            check
    python compare.py TABLE_DIR --record   fill in `expected` where it is missing
"""

import json
import pathlib
import sys

import jq


def raw(line):
    """A line of jq's compact output as `jq -r` prints it: a string unquoted. Other
    values are written again without ASCII escapes, which the binding adds."""
    value = json.loads(line)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def run(filter_text, documents):
    out = []
    for document in documents:
        try:
            text = jq.compile(filter_text).input_text(document).text()
        except ValueError:
            # jq's messages and jaq's differ in words; that the filter fails is compared.
            out.append("error")
            break
        out.extend(raw(line) for line in text.splitlines())
    return "".join(line + "\n" for line in out)


def main():
    table_dir = pathlib.Path(sys.argv[1])
    record = "--record" in sys.argv[2:]
    table_path = table_dir / "filters.json"
    rows = json.loads(table_path.read_text())
    wrong = []
    differs = 0
    for number, row in enumerate(rows, 1):
        source = (table_dir / row["input"]).read_text()
        documents = source.splitlines() if row["input"].endswith(".jsonl") else [source]
        got = run(row["filter"], documents)
        if record and "expected" not in row:
            row["expected"] = got
        want = row["jq"] if "differs" in row else row["expected"]
        differs += "differs" in row
        if got != want:
            wrong.append(f"row {number} ({row['input']}: {row['filter']}): jq printed {got!r}, the table says {want!r}")
    if record:
        table_path.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    for line in wrong:
        print(line, file=sys.stderr)
    print(f"{len(rows)} filters run by jq: {len(rows) - differs - len(wrong)} print what mediagen --jq prints, "
          f"{differs} differ as the table documents, {len(wrong)} wrong")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
