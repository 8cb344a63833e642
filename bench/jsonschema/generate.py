"""Writes a ~1 MB order-feed document and a 2020-12 schema for it (deterministic)."""
import json
import random
import sys

out_dir = sys.argv[1]
target_bytes = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
rng = random.Random(42)

schema = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://bench.kagami.example/orders.json",
    "type": "object",
    "required": ["generatedAt", "orders"],
    "properties": {
        "generatedAt": {"type": "string", "format": "date-time"},
        "orders": {"type": "array", "items": {"$ref": "#/$defs/order"}, "minItems": 1},
    },
    "additionalProperties": False,
    "$defs": {
        "money": {"type": "string", "pattern": "^-?[0-9]+\\.[0-9]{2}$"},
        "address": {
            "type": "object",
            "required": ["street", "city", "postcode", "country"],
            "properties": {
                "street": {"type": "string", "minLength": 1, "maxLength": 200},
                "city": {"type": "string", "minLength": 1},
                "postcode": {"type": "string", "pattern": "^[A-Z0-9 -]{3,10}$"},
                "country": {"type": "string", "enum": ["DE", "FR", "JP", "US", "GB", "NL", "SE"]},
            },
            "additionalProperties": False,
        },
        "line": {
            "type": "object",
            "required": ["sku", "quantity", "unitPrice"],
            "properties": {
                "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{5}$"},
                "quantity": {"type": "integer", "minimum": 1, "maximum": 1000},
                "unitPrice": {"$ref": "#/$defs/money"},
                "discountPercent": {"type": "integer", "minimum": 0, "exclusiveMaximum": 100, "multipleOf": 5},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}, "uniqueItems": True},
            },
            "additionalProperties": False,
        },
        "order": {
            "type": "object",
            "required": ["id", "status", "customer", "lines", "total", "createdAt"],
            "properties": {
                "id": {"type": "string", "format": "uuid", "pattern": "^[0-9a-f-]{36}$"},
                "status": {"enum": ["pending", "paid", "shipped", "delivered", "cancelled"]},
                "customer": {
                    "type": "object",
                    "required": ["id", "email", "name"],
                    "properties": {
                        "id": {"type": "integer", "minimum": 1},
                        "email": {"type": "string", "format": "email", "maxLength": 254},
                        "name": {"type": "string", "minLength": 1},
                        "vip": {"type": "boolean"},
                    },
                },
                "shipping": {"$ref": "#/$defs/address"},
                "billing": {"$ref": "#/$defs/address"},
                "lines": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/line"}},
                "total": {"$ref": "#/$defs/money"},
                "createdAt": {"type": "string", "format": "date-time"},
                "note": {"type": ["string", "null"]},
            },
            "allOf": [
                {
                    "if": {"properties": {"status": {"const": "shipped"}}},
                    "then": {"required": ["shipping"]},
                }
            ],
            "additionalProperties": False,
        },
    },
}

def address():
    return {
        "street": f"{rng.randint(1, 999)} {rng.choice(['Main', 'Elm', 'Oak', 'Sakura'])} Street",
        "city": rng.choice(["Berlin", "Paris", "Tokyo", "Austin", "Leeds"]),
        "postcode": f"{rng.randint(10000, 99999)}",
        "country": rng.choice(["DE", "FR", "JP", "US", "GB"]),
    }

def uuid():
    h = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

def order(n):
    lines = []
    for _ in range(rng.randint(1, 5)):
        line = {
            "sku": "".join(rng.choice("ABCDEFGH") for _ in range(3)) + f"-{rng.randint(0, 99999):05d}",
            "quantity": rng.randint(1, 20),
            "unitPrice": f"{rng.randint(1, 500)}.{rng.randint(0, 99):02d}",
        }
        if rng.random() < 0.4:
            line["discountPercent"] = rng.randint(0, 10) * 5
        if rng.random() < 0.5:
            line["tags"] = rng.sample(["gift", "fragile", "express", "bulk", "promo"], rng.randint(1, 3))
        lines.append(line)
    status = rng.choice(["pending", "paid", "shipped", "delivered", "cancelled"])
    o = {
        "id": uuid(),
        "status": status,
        "customer": {"id": n + 1, "email": f"customer{n}@example.com", "name": f"Customer {n}", "vip": rng.random() < 0.1},
        "lines": lines,
        "total": f"{rng.randint(1, 5000)}.{rng.randint(0, 99):02d}",
        "createdAt": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z",
        "note": rng.choice([None, "leave at the door", "call first"]),
    }
    o["shipping"] = address()
    if rng.random() < 0.5:
        o["billing"] = address()
    return o

orders = []
size = 0
while size < target_bytes:
    o = order(len(orders))
    orders.append(o)
    size += len(json.dumps(o)) + 2
document = {"generatedAt": "2026-11-21T00:00:00Z", "orders": orders}

# The same feed with every 50th order broken in three ways, for the error-collecting path.
broken = json.loads(json.dumps(document))
for n, o in enumerate(broken["orders"]):
    if n % 50 == 0:
        o["lines"][0]["sku"] = "bad sku"
        o["lines"][0]["quantity"] = 0
        del o["createdAt"]
with open(f"{out_dir}/orders-invalid.json", "w") as f:
    json.dump(broken, f)

with open(f"{out_dir}/orders.schema.json", "w") as f:
    json.dump(schema, f, indent=2)
with open(f"{out_dir}/orders.json", "w") as f:
    json.dump(document, f)
print(f"{len(orders)} orders, {len(json.dumps(document))} bytes")
