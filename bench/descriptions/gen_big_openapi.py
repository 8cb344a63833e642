#!/usr/bin/env python3
"""Generate a large OpenAPI description (default 27,000 paths, ~52 MB of YAML, ~63 MB of JSON) for the
description benchmarks and tests. Deterministic: the same arguments give the same bytes.

Usage: gen_big_openapi.py OUT_PATH [--paths N] [--format yaml|json] [--version 3.0.3|3.1.0]
  OUT_PATH   where the document is written (.yaml or .json; the format follows the extension
             unless --format says otherwise)
  --paths    how many paths (default 27000; rounded up to a multiple of three: each module
             has three)
  --version  the `openapi` field (default 3.0.3)

Prints one line of counts (bytes, paths, operations, schemas) and, with --summary FILE, writes
them as JSON too, so a test can compare what a reader found with what was written.

Structure, per module i (three paths; 5 operations, 6 on every third module):
  /v1/mod{i}/items            GET (query limit/cursor/sort, a shared header parameter by $ref,
                                   200 page of Item{i} with a header, 400 shared response by
                                   $ref, a default Error response on even modules)
                              POST (request body $ref ItemInput{i} with an example; 201 Item{i}
                                   with a Location header, 422 Error with an example)
  /v1/mod{i}/items/{itemId}   path parameter itemId on the path item
                              GET (200 Item{i}, two named examples on every fourth module; 404)
                              PATCH on every third module (request body oneOf ItemInput{i} / a
                                   status-only object; 200 Item{i}, 404)
                              DELETE (204)
  /v1/mod{i}/items/{itemId}/archive  POST (204, 404)
  components/schemas: Item{i} = allOf [Base{i % 10}, an object with $refs to Money, Owner and a
  oneOf of Physical/Digital], ItemInput{i}, and shared Base0..9, Money, Owner (with an Address
  $ref), Address, Physical, Digital, Error. Operations carry tags (one per 50 modules),
  summaries and operationIds.
"""
import argparse
import json
import re

N_BASE = 10


def ref(name):
    return {"$ref": f"#/components/schemas/{name}"}


def shared_schemas():
    schemas = {}
    for b in range(N_BASE):
        schemas[f"Base{b}"] = {
            "type": "object",
            "description": f"Fields every resource of family {b} has.",
            "required": ["id", "createdAt"],
            "properties": {
                "id": {"type": "string", "pattern": "^[a-z0-9-]{4,40}$", "example": f"b{b}-0001"},
                "createdAt": {"type": "string", "format": "date-time"},
                "updatedAt": {"type": "string", "format": "date-time"},
                "revision": {"type": "integer", "format": "int32", "minimum": 1},
            },
        }
    schemas["Money"] = {
        "type": "object",
        "required": ["amount", "currency"],
        "properties": {
            "amount": {"type": "number", "minimum": 0, "example": 12.5},
            "currency": {"type": "string", "enum": ["EUR", "USD", "JPY"], "example": "EUR"},
        },
    }
    schemas["Address"] = {
        "type": "object",
        "properties": {
            "street": {"type": "string", "maxLength": 200},
            "city": {"type": "string"},
            "postcode": {"type": "string", "pattern": "^[0-9A-Z -]{3,10}$"},
            "country": {"type": "string", "minLength": 2, "maxLength": 2},
        },
    }
    schemas["Owner"] = {
        "type": "object",
        "required": ["login"],
        "properties": {
            "login": {"type": "string", "example": "ada"},
            "email": {"type": "string", "format": "email"},
            "address": ref("Address"),
        },
    }
    schemas["Physical"] = {
        "type": "object",
        "required": ["kind", "weight"],
        "properties": {
            "kind": {"type": "string", "enum": ["physical"]},
            "weight": {"type": "number", "minimum": 0},
            "dimensions": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3},
        },
    }
    schemas["Digital"] = {
        "type": "object",
        "required": ["kind", "url"],
        "properties": {
            "kind": {"type": "string", "enum": ["digital"]},
            "url": {"type": "string", "format": "uri"},
            "sizeBytes": {"type": "integer", "format": "int64", "minimum": 0},
        },
    }
    schemas["Error"] = {
        "type": "object",
        "required": ["code", "message"],
        "properties": {
            "code": {"type": "string", "example": "not_found"},
            "message": {"type": "string", "example": "Resource not found"},
            "details": {"type": "array", "items": {"type": "string"}},
        },
    }
    return schemas


def module_schemas(i):
    b = i % N_BASE
    item = {
        "description": f"An item of module {i}, with the fields of Base{b}.",
        "allOf": [
            ref(f"Base{b}"),
            {
                "type": "object",
                "required": ["name", "price", "status"],
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 120, "example": f"item-{i}"},
                    "price": ref("Money"),
                    "status": {"type": "string", "enum": ["draft", "active", "retired"]},
                    "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                    "owner": ref("Owner"),
                    "variant": {"oneOf": [ref("Physical"), ref("Digital")]},
                    "rank": {"type": "integer", "minimum": 0, "maximum": 1000, "example": i % 1000},
                },
            },
        ],
    }
    item_input = {
        "type": "object",
        "required": ["name", "price"],
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 120},
            "price": ref("Money"),
            "status": {"type": "string", "enum": ["draft", "active"], "default": "draft"},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 20},
        },
    }
    return {f"Item{i}": item, f"ItemInput{i}": item_input}


def item_example(i, n):
    b = i % N_BASE
    return {
        "id": f"b{b}-{n:04d}",
        "createdAt": "2026-01-02T10:00:00Z",
        "name": f"item-{i}-{n}",
        "price": {"amount": (i % 997) + 0.5, "currency": "EUR"},
        "status": "active",
        "tags": ["alpha", "beta"],
        "owner": {"login": f"user{i}", "email": f"user{i}@example.com"},
        "variant": {"kind": "physical", "weight": 1.25, "dimensions": [1, 2, 3]},
    }


def module_paths(i):
    tag = f"Module group {i // 50}"
    error = {"application/json": {"schema": ref("Error")}}
    collection = {
        "get": {
            "operationId": f"listItems{i}",
            "summary": f"List the items of module {i}",
            "description": "Pages through the items, newest first unless `sort` says otherwise.",
            "tags": [tag],
            "parameters": [
                {"name": "limit", "in": "query", "description": "Page size.",
                 "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}},
                {"name": "cursor", "in": "query", "schema": {"type": "string"}},
                {"name": "sort", "in": "query",
                 "schema": {"type": "string", "enum": ["newest", "oldest", "name"], "default": "newest"}},
                {"$ref": "#/components/parameters/TraceId"},
            ],
            "responses": {
                "200": {
                    "description": "A page of items.",
                    "headers": {"X-Total-Count": {"schema": {"type": "integer", "example": i * 7}}},
                    "content": {"application/json": {
                        "schema": {
                            "type": "object",
                            "required": ["items"],
                            "properties": {
                                "items": {"type": "array", "items": ref(f"Item{i}")},
                                "next": {"type": "string", "nullable": True},
                            },
                        },
                    }},
                },
                "400": {"$ref": "#/components/responses/BadRequest"},
                "default": {"description": "Unexpected error.", "content": error},
            },
        },
        "post": {
            "operationId": f"createItem{i}",
            "summary": f"Create an item in module {i}",
            "tags": [tag],
            "requestBody": {
                "required": True,
                "content": {"application/json": {
                    "schema": ref(f"ItemInput{i}"),
                    "example": {"name": f"item-{i}", "price": {"amount": 3.5, "currency": "EUR"}},
                }},
            },
            "responses": {
                "201": {
                    "description": "Created.",
                    "headers": {"Location": {"schema": {"type": "string"}, "example": f"/v1/mod{i}/items/b{i % N_BASE}-0001"}},
                    "content": {"application/json": {"schema": ref(f"Item{i}")}},
                },
                "422": {
                    "description": "The item is not valid.",
                    "content": {"application/json": {
                        "schema": ref("Error"),
                        "example": {"code": "invalid", "message": "name is required", "details": ["name"]},
                    }},
                },
            },
        },
    }
    item = {
        "parameters": [
            {"name": "itemId", "in": "path", "required": True, "description": "The item's id.",
             "schema": {"type": "string", "pattern": "^[a-z0-9-]{4,40}$"}},
        ],
        "get": {
            "operationId": f"getItem{i}",
            "summary": f"One item of module {i}",
            "tags": [tag],
            "responses": {
                "200": {
                    "description": "The item.",
                    "content": {"application/json": {
                        "schema": ref(f"Item{i}"),
                    }},
                },
                "404": {"description": "No such item.", "content": error},
            },
        },
        "patch": {
            "operationId": f"updateItem{i}",
            "tags": [tag],
            "requestBody": {
                "content": {"application/json": {"schema": {"oneOf": [
                    ref(f"ItemInput{i}"),
                    {"type": "object", "required": ["status"],
                     "properties": {"status": {"type": "string", "enum": ["retired"]}}},
                ]}}},
            },
            "responses": {
                "200": {"description": "Updated.", "content": {"application/json": {"schema": ref(f"Item{i}")}}},
                "404": {"description": "No such item.", "content": error},
            },
        },
        "delete": {
            "operationId": f"deleteItem{i}",
            "tags": [tag],
            "responses": {"204": {"description": "Deleted."}},
        },
    }
    if i % 4 == 0:
        item["get"]["responses"]["200"]["content"]["application/json"]["examples"] = {
            "first": {"summary": "A physical item", "value": item_example(i, 1)},
            "second": {"summary": "Another one", "value": item_example(i, 2)},
        }
    if i % 3 != 0:
        del item["patch"]
    if i % 2:
        del collection["get"]["responses"]["default"]
        del collection["get"]["description"]
    archive = {
        "post": {
            "operationId": f"archiveItem{i}",
            "summary": "Archive the item",
            "tags": [tag],
            "parameters": [{"name": "itemId", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"204": {"description": "Archived."}, "404": {"description": "No such item.", "content": error}},
        },
    }
    return {
        f"/v1/mod{i}/items": collection,
        f"/v1/mod{i}/items/{{itemId}}": item,
        f"/v1/mod{i}/items/{{itemId}}/archive": archive,
    }


def document(modules, version):
    paths = {}
    schemas = {}
    for i in range(modules):
        paths.update(module_paths(i))
    schemas.update(shared_schemas())
    for i in range(modules):
        schemas.update(module_schemas(i))
    doc = {
        "openapi": version,
        "info": {
            "title": "Big Generated API",
            "version": "1.0.0",
            "description": f"Synthetic description of {modules} modules for the description benchmarks.",
        },
        "servers": [{"url": "https://api.example.com", "description": "production"}],
        "tags": [{"name": f"Module group {g}", "description": f"Modules {g * 50} to {g * 50 + 49}."}
                 for g in range((modules + 49) // 50)],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "parameters": {
                "TraceId": {"name": "X-Trace-Id", "in": "header", "required": False,
                            "schema": {"type": "string", "maxLength": 64}},
            },
            "responses": {
                "BadRequest": {"description": "The request is not valid.",
                               "content": {"application/json": {"schema": ref("Error")}}},
            },
        },
    }
    if version.startswith("3.1"):
        # 3.1 has no `nullable`: the type says null instead.
        for item in paths.values():
            get = item.get("get")
            if get is None:
                continue
            props = get["responses"]["200"]["content"]["application/json"]["schema"].get("properties", {})
            if "next" in props:
                props["next"] = {"type": ["string", "null"]}
    return doc


PLAIN = re.compile(r"^[A-Za-z_/][A-Za-z0-9 _./{}()`,@-]*$")
RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "~", "y", "n"}


def scalar(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    text = str(value)
    if PLAIN.match(text) and text.lower() not in RESERVED and not text.endswith(" ") and ": " not in text and " #" not in text:
        return text
    return json.dumps(text)


def key(text):
    # Status codes are quoted, as documents usually write them, so they stay strings.
    if PLAIN.match(text) and text.lower() not in RESERVED and not text[0].isdigit():
        return text
    return json.dumps(text)


def yaml_lines(value, indent, out):
    pad = "  " * indent
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, list) and v and all(not isinstance(e, (dict, list)) for e in v):
                # Lists of scalars (enum, required, tags) in flow style, as documents write them.
                out.append(f"{pad}{key(k)}: {flow(v)}")
            elif isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{key(k)}:")
                yaml_lines(v, indent + 1 if isinstance(v, dict) else indent, out)
            else:
                out.append(f"{pad}{key(k)}: {empty_or_scalar(v)}")
    else:
        for v in value:
            if isinstance(v, dict) and v:
                first = True
                sub = []
                yaml_lines(v, indent + 1, sub)
                for line in sub:
                    if first:
                        out.append(f"{pad}- {line[len(pad) + 2:]}")
                        first = False
                    else:
                        out.append(line)
            elif isinstance(v, list) and v:
                out.append(f"{pad}- {flow(v)}")
            else:
                out.append(f"{pad}- {empty_or_scalar(v)}")


def flow(items):
    return "[" + ", ".join(scalar(e) for e in items) + "]"


def empty_or_scalar(v):
    if isinstance(v, dict):
        return "{}"
    if isinstance(v, list):
        return "[]"
    return scalar(v)


def main():
    parser = argparse.ArgumentParser(description="Generate a large OpenAPI description.")
    parser.add_argument("out")
    parser.add_argument("--paths", type=int, default=27000)
    parser.add_argument("--format", choices=["yaml", "json"])
    parser.add_argument("--version", default="3.0.3")
    parser.add_argument("--summary")
    args = parser.parse_args()
    fmt = args.format or ("json" if args.out.endswith(".json") else "yaml")
    modules = (args.paths + 2) // 3
    doc = document(modules, args.version)
    if fmt == "json":
        text = json.dumps(doc, indent=1) + "\n"
    else:
        lines = []
        yaml_lines(doc, 0, lines)
        text = "\n".join(lines) + "\n"
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    counts = {
        "bytes": len(text.encode("utf-8")),
        "paths": len(doc["paths"]),
        "operations": sum(1 for item in doc["paths"].values() for method in item if method != "parameters"),
        "schemas": len(doc["components"]["schemas"]),
        "tags": len(doc["tags"]),
        "modules": modules,
    }
    if args.summary:
        with open(args.summary, "w", encoding="utf-8") as f:
            json.dump(counts, f)
    print(f"wrote {args.out}: {counts['bytes']} bytes, {counts['paths']} paths, "
          f"{counts['operations']} operations, {counts['schemas']} schemas, {counts['tags']} tags")


if __name__ == "__main__":
    main()
