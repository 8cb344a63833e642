"""Reads a JUnit XML report with junitparser (a JUnit reader CI tools use) and prints what it
found as JSON: suites, their cases, and each case's result."""
import json
import sys

from junitparser import JUnitXml

xml = JUnitXml.fromfile(sys.argv[1])
suites = []
for suite in xml:
    cases = []
    for case in suite:
        results = [{"kind": type(r).__name__, "message": r.message, "type": r.type} for r in case.result]
        cases.append({"name": case.name, "classname": case.classname, "results": results})
    suites.append({"name": suite.name, "tests": suite.tests, "failures": suite.failures, "cases": cases})
print(json.dumps({"tests": xml.tests, "failures": xml.failures, "suites": suites}))
