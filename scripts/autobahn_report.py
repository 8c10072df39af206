#!/usr/bin/env python3
"""Reads Autobahn|Testsuite's client report (reports/clients/index.json) and prints, per agent and case group,
how many cases passed and failed, the failing cases with their behaviour, the time each group took (as the
server measured it) and the slowest cases.

A case passes when its behaviour is OK, NON-STRICT or INFORMATIONAL and its close behaviour is OK or
INFORMATIONAL; anything else (FAILED, UNIMPLEMENTED, WRONG CODE, UNCLEAN, ...) fails it, and so does a case
the server selected (cases.json, written by `scripts/autobahn.sh start`) that the agent never ran. A failing
case listed in the expected-failures file, one case id (or a pattern such as 9.7.*) and its reason per line,
(optionally for one agent only: `7.1.5 agent=websockets-* reason`) is reported as allowed. Exits 1 if a case failed that is not allowed, 0 otherwise.

    scripts/autobahn.sh report [--agent NAME] [--expected-failures FILE]
"""

import argparse
import fnmatch
import json
import os
import sys

PASSING = {"OK", "NON-STRICT", "INFORMATIONAL"}
PASSING_CLOSE = {"OK", "INFORMATIONAL"}


def case_key(case_id):
    return tuple(int(part) for part in case_id.split("."))


def load_expected_failures(path):
    """Lines of `CASE-ID-OR-PATTERN [agent=AGENT-PATTERN] reason`; `#` starts a comment. Without agent=, the
    line allows the failure for every agent. A line without a reason is an error."""
    entries = []
    if not path or not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 1)
            agent = "*"
            if len(parts) == 2 and parts[1].startswith("agent="):
                agent_and_reason = parts[1].split(None, 1)
                agent = agent_and_reason[0][len("agent="):]
                parts = [parts[0]] + agent_and_reason[1:]
            if len(parts) < 2:
                sys.exit("{}:{}: `{}` has no reason; write `CASE-ID [agent=NAME] reason`".format(path, number, line))
            entries.append((parts[0], agent, parts[1].strip()))
    return entries


def allowed_reason(case_id, agent, expected):
    for pattern, agent_pattern, reason in expected:
        if fnmatch.fnmatchcase(case_id, pattern) and fnmatch.fnmatchcase(agent, agent_pattern):
            return reason
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reports", required=True, help="the fuzzingserver's outdir (holds index.json)")
    parser.add_argument("--cases", help="cases.json: the case ids the server selected")
    parser.add_argument("--agent", action="append", help="report only this agent (repeatable; default: all)")
    parser.add_argument("--expected-failures", help="allowed failures, `CASE-ID reason` per line")
    parser.add_argument("--slowest", type=int, default=5, help="list the N slowest cases (default 5; 0: none)")
    args = parser.parse_args()

    index_path = os.path.join(args.reports, "index.json")
    if not os.path.exists(index_path):
        sys.exit("no report at {}: did the client ask for /updateReports?agent=NAME?".format(index_path))
    with open(index_path, encoding="utf-8") as file:
        index = json.load(file)
    selected = None
    if args.cases and os.path.exists(args.cases):
        with open(args.cases, encoding="utf-8") as file:
            selected = json.load(file)
    expected = load_expected_failures(args.expected_failures)

    agents = args.agent or sorted(index)
    if not agents:
        sys.exit("{} lists no agent".format(index_path))
    unexpected_total = 0
    for agent in agents:
        if agent not in index:
            print("agent {}: not in the report (agents: {})".format(agent, ", ".join(sorted(index)) or "none"))
            unexpected_total += 1
            continue
        results = index[agent]
        case_ids = sorted(set(results) | set(selected or []), key=case_key)
        groups = {}
        failures = []
        for case_id in case_ids:
            group = groups.setdefault(case_id.split(".")[0], {"passed": 0, "failed": 0, "allowed": 0, "ms": 0})
            result = results.get(case_id)
            if result is None:
                behaviour = "NOT RUN"
            else:
                group["ms"] += result.get("duration") or 0
                if result["behavior"] in PASSING and result["behaviorClose"] in PASSING_CLOSE:
                    group["passed"] += 1
                    continue
                behaviour = "{} / close {}".format(result["behavior"], result["behaviorClose"])
                if result.get("remoteCloseCode") is not None:
                    behaviour += " (close code {})".format(result["remoteCloseCode"])
            reason = allowed_reason(case_id, agent, expected)
            if reason is None:
                group["failed"] += 1
            else:
                group["allowed"] += 1
            failures.append((case_id, behaviour, reason))

        print("agent {}".format(agent))
        print("  {:<7} {:>6} {:>6} {:>8} {:>9}".format("group", "passed", "failed", "allowed", "seconds"))
        for name in sorted(groups, key=int):
            group = groups[name]
            print("  {:<7} {:>6} {:>6} {:>8} {:>9.1f}".format(
                name + ".*", group["passed"], group["failed"], group["allowed"], group["ms"] / 1000))
        print("  {:<7} {:>6} {:>6} {:>8} {:>9.1f}".format(
            "all", sum(g["passed"] for g in groups.values()), sum(g["failed"] for g in groups.values()),
            sum(g["allowed"] for g in groups.values()), sum(g["ms"] for g in groups.values()) / 1000))
        if args.slowest > 0:
            slowest = sorted(results.items(), key=lambda item: -(item[1].get("duration") or 0))[:args.slowest]
            print("  slowest: " + ", ".join(
                "{} {:.1f} s".format(case_id, (result.get("duration") or 0) / 1000) for case_id, result in slowest))
        unexpected = [failure for failure in failures if failure[2] is None]
        allowed = [failure for failure in failures if failure[2] is not None]
        if unexpected:
            print("  failed:")
            for case_id, behaviour, _ in unexpected:
                print("    {:<9} {}".format(case_id, behaviour))
        if allowed:
            print("  failed, allowed by the expected failures:")
            for case_id, behaviour, reason in allowed:
                print("    {:<9} {} ({})".format(case_id, behaviour, reason))
        stale = [pattern for pattern, agent_pattern, _ in expected
                 if fnmatch.fnmatchcase(agent, agent_pattern)
                 and not any(fnmatch.fnmatchcase(case_id, pattern) for case_id, _, _ in failures)]
        if stale:
            print("  expected to fail but passed or not selected (remove from the list?): {}".format(", ".join(stale)))
        unexpected_total += len(unexpected)

    if unexpected_total:
        print("{} case(s) failed that the expected failures do not allow".format(unexpected_total))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
