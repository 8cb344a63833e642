"""Times Python jsonschema (Draft 2020-12) on the same schema and document, in process."""
import json
import sys
import time

import jsonschema

schema_path, document_path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
schema = json.load(open(schema_path))
document = json.load(open(document_path))
validator = jsonschema.Draft202012Validator(schema)
errors = list(validator.iter_errors(document))
if errors:
    sys.exit(f"python jsonschema finds the document invalid: {errors[0].message}")
start = time.perf_counter()
for _ in range(repeat):
    for error in validator.iter_errors(document):
        sys.exit(f"unexpected error: {error.message}")
elapsed = time.perf_counter() - start
print(f"{repeat / elapsed:.2f}")
