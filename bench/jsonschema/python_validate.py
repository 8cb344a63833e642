"""Times Python jsonschema (Draft 2020-12) on the same schema and document, in process."""
import json
import sys
import time

import jsonschema

schema_path, document_path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
schema = json.load(open(schema_path))
document = json.load(open(document_path))
validator = jsonschema.Draft202012Validator(schema)
expected = len(list(validator.iter_errors(document)))
start = time.perf_counter()
for _ in range(repeat):
    # Every error is collected, as `kagami schema check` does.
    found = len(list(validator.iter_errors(document)))
    if found != expected:
        sys.exit("error count changed between runs")
elapsed = time.perf_counter() - start
print(f"{repeat / elapsed:.2f} {expected}")
