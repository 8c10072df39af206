"""Tests of scripts/autobahn_report.py, the reader of Autobahn|Testsuite's report: its counts, which failures
the expected-failures file allows, and its exit code, on reports written here in the fuzzingserver's format.

    python3 -m unittest discover -s Tests/Autobahn -v
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(ROOT, "scripts", "autobahn_report.py")


def case(behavior, close="OK", code=1000, duration=3):
    return {"behavior": behavior, "behaviorClose": close, "remoteCloseCode": code, "duration": duration,
            "reportfile": "x.json"}


class AutobahnReportTests(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.TemporaryDirectory()
        self.addCleanup(self.directory.cleanup)

    def write(self, name, content):
        path = os.path.join(self.directory.name, name)
        with open(path, "w", encoding="utf-8") as file:
            file.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def run_report(self, index, cases=None, expected="", *arguments):
        self.write("index.json", index)
        command = [sys.executable, REPORT, "--reports", self.directory.name,
                   "--expected-failures", self.write("expected.txt", expected)]
        if cases is not None:
            command += ["--cases", self.write("cases.json", cases)]
        result = subprocess.run(command + list(arguments), capture_output=True, text=True, check=False)
        return result.returncode, result.stdout + result.stderr

    def test_passing_behaviours_pass_and_exit_zero(self):
        index = {"client": {"1.1.1": case("OK"), "3.2": case("NON-STRICT"),
                            "7.1.6": case("INFORMATIONAL", "INFORMATIONAL")}}
        status, output = self.run_report(index)
        self.assertEqual(status, 0, output)
        self.assertRegex(output, r"1\.\*\s+1\s+0\s+0")
        self.assertRegex(output, r"all\s+3\s+0\s+0")
        self.assertNotIn("failed:", output)

    def test_a_failed_case_or_close_fails_the_run_and_is_listed(self):
        index = {"client": {"1.1.1": case("OK"), "6.4.1": case("FAILED", "FAILED", 1009),
                            "7.1.5": case("OK", "WRONG CODE", 1002), "7.1.6": case("OK", "UNCLEAN", None)}}
        status, output = self.run_report(index)
        self.assertEqual(status, 1, output)
        self.assertIn("6.4.1     FAILED / close FAILED (close code 1009)", output)
        self.assertIn("7.1.5     OK / close WRONG CODE (close code 1002)", output)
        self.assertIn("7.1.6     OK / close UNCLEAN", output)
        self.assertRegex(output, r"7\.\*\s+0\s+2\s+0")
        self.assertIn("3 case(s) failed", output)

    def test_unimplemented_fails(self):
        status, output = self.run_report({"client": {"12.1.1": case("UNIMPLEMENTED")}})
        self.assertEqual(status, 1, output)
        self.assertIn("12.1.1    UNIMPLEMENTED", output)

    def test_a_selected_case_the_agent_never_ran_fails(self):
        status, output = self.run_report({"client": {"1.1.1": case("OK")}}, ["1.1.1", "1.1.2"])
        self.assertEqual(status, 1, output)
        self.assertIn("1.1.2     NOT RUN", output)

    def test_an_expected_failure_with_its_reason_is_allowed(self):
        index = {"client": {"1.1.1": case("OK"), "9.7.1": case("FAILED", "FAILED"), "9.7.2": case("FAILED")}}
        status, output = self.run_report(index, None, "# comment\n9.7.*  slow frames on this library\n")
        self.assertEqual(status, 0, output)
        self.assertRegex(output, r"9\.\*\s+0\s+0\s+2")
        self.assertIn("9.7.2     FAILED / close OK (close code 1000) (slow frames on this library)", output)

    def test_an_expected_failure_for_one_agent_does_not_excuse_another(self):
        index = {"websockets-17.4": {"7.1.5": case("FAILED", "WRONG CODE", 1002)},
                 "ServerAPIKit-curl": {"7.1.5": case("FAILED", "WRONG CODE", 1002)}}
        status, output = self.run_report(index, None, "7.1.5 agent=websockets-* closes with 1002\n")
        self.assertEqual(status, 1, output)
        self.assertIn("1 case(s) failed", output)
        status, output = self.run_report(index, None, "7.1.5 agent=websockets-* closes with 1002\n",
                                         "--agent", "websockets-17.4")
        self.assertEqual(status, 0, output)

    def test_an_expected_failure_without_a_reason_is_refused(self):
        status, output = self.run_report({"client": {"1.1.1": case("OK")}}, None, "9.7.1\n")
        self.assertNotEqual(status, 0, output)
        self.assertIn("has no reason", output)

    def test_an_expected_failure_that_passes_is_named(self):
        status, output = self.run_report({"client": {"2.1": case("OK")}}, None, "2.1 was broken once\n")
        self.assertEqual(status, 0, output)
        self.assertIn("expected to fail but passed or not selected (remove from the list?): 2.1", output)

    def test_an_agent_missing_from_the_report_fails(self):
        status, output = self.run_report({"client": {"1.1.1": case("OK")}}, None, "", "--agent", "other")
        self.assertEqual(status, 1, output)
        self.assertIn("agent other: not in the report (agents: client)", output)

    def test_groups_sum_the_servers_durations_and_sort_numerically(self):
        index = {"client": {"10.1.1": case("OK", duration=500), "9.1.1": case("OK", duration=1500),
                            "9.1.2": case("OK", duration=2000), "2.1": case("OK", duration=100)}}
        status, output = self.run_report(index, None, "", "--slowest", "2")
        self.assertEqual(status, 0, output)
        self.assertRegex(output, r"9\.\*\s+2\s+0\s+0\s+3\.5")
        self.assertLess(output.index("2.*"), output.index("9.*"))
        self.assertLess(output.index("9.*"), output.index("10.*"))
        self.assertIn("slowest: 9.1.2 2.0 s, 9.1.1 1.5 s", output)

    def test_no_report_is_an_error(self):
        result = subprocess.run([sys.executable, REPORT, "--reports", self.directory.name],
                                capture_output=True, text=True, check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("did the client ask for /updateReports", result.stderr)


if __name__ == "__main__":
    unittest.main()
