"""Validates OpenAPI documents with openapi-spec-validator: one path per argument; prints one
line per invalid document and exits 1 when there is any."""
import json
import sys

from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

failed = 0
for path in sys.argv[1:]:
    try:
        spec, _ = read_from_filename(path)
        validate(spec)
    except Exception as error:  # every kind of refusal is reported the same way
        failed += 1
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(json.dumps({"path": path, "error": message}))
sys.exit(1 if failed else 0)
