// The generated `Client` and `Components` come from openapi.json (the build plugin).
