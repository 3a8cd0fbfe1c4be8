"""A grader process for the serve tests: grades through the API until nothing is left.

    python grader_client.py BASE_URL TOKEN EVALUATION_ID OUT.jsonl NAME [BATCH] [VALUE]

Each acknowledged batch (HTTP 200, i.e. committed) is appended to OUT.jsonl and
flushed before the next request, so what the file says was acknowledged was.
"""

from __future__ import annotations

import json
import sys

import httpx


def main() -> int:
    base, token, evaluation, out, name = sys.argv[1:6]
    size = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    value = float(sys.argv[7]) if len(sys.argv) > 7 else None
    headers = {"Authorization": f"Bearer {token}"}
    n = 0
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client, \
            open(out, "a", encoding="utf-8") as log:
        while True:
            tasks = client.get(f"/api/v1/evaluations/{evaluation}/tasks/next",
                               params={"n": size})
            tasks.raise_for_status()
            if not tasks.json():
                return 0
            n += 1
            batch = {"batch_id": f"{name}-{n}",
                     "grades": [{"task_id": t["task_id"],
                                 "value": value if value is not None else t["position"] % 4}
                                for t in tasks.json()]}
            answer = client.post(f"/api/v1/evaluations/{evaluation}/grades", json=batch)
            answer.raise_for_status()
            log.write(json.dumps(answer.json()) + "\n")
            log.flush()


if __name__ == "__main__":
    sys.exit(main())
