"""Qdrant's engine as a test oracle: Qdrant Edge (qdrant-edge-py, the server's segment, filter and query
code in-process, no HTTP server) driven by JSON lines on stdin, one answer line on stdout per request.

Requests carry the REST bodies QdrantStore sends (https://api.qdrant.tech/api-reference), translated here
to Edge's objects one to one, so what is tested is the request our adapter builds, scored by Qdrant:

  {"op": "create", "path": DIR, "body": <PUT /collections/{c} body>}
  {"op": "index", "body": <PUT /collections/{c}/index body>}
  {"op": "upsert", "body": <PUT /collections/{c}/points body>}
  {"op": "delete", "body": <POST /collections/{c}/points/delete body>}
  {"op": "set_payload", "body": <POST /collections/{c}/points/payload body>}
  {"op": "query", "body": <POST /collections/{c}/points/query body>}
  {"op": "retrieve", "body": <POST /collections/{c}/points body>}
  {"op": "scroll", "body": <POST /collections/{c}/points/scroll body>}
  {"op": "count", "body": <POST /collections/{c}/points/count body>}
  {"op": "facet", "body": <POST /collections/{c}/facet body>}
  {"op": "reload"}: closes the shard and loads it from disk, as a restarted server does

Answer: {"result": ...} shaped as the REST `result`, or {"error": "..."} (an unsupported field is an error,
never silently dropped). Test tooling only: the product never runs Python.
"""

import json
import sys
import uuid

import qdrant_edge as edge

# `{"fusion": "rrf"}` is RRF with Qdrant's DEFAULT_RRF_K = 2
# (https://github.com/qdrant/qdrant/blob/master/lib/segment/src/common/reciprocal_rank_fusion.rs); Edge's
# binding takes k explicitly.
DEFAULT_RRF_K = 2

DISTANCES = {"Cosine": edge.Distance.Cosine, "Dot": edge.Distance.Dot, "Euclid": edge.Distance.Euclid}


class Unsupported(Exception):
    pass


def known(body, keys, what):
    extra = set(body) - set(keys)
    if extra:
        raise Unsupported(f"{what}: unsupported fields {sorted(extra)}")


def as_list(value):
    if value is None:
        return None
    return value if isinstance(value, list) else [value]


def to_filter(body):
    if body is None:
        return None
    known(body, ["must", "should", "must_not"], "filter")
    convert = lambda conditions: None if conditions is None else [to_condition(c) for c in as_list(conditions)]
    return edge.Filter(must=convert(body.get("must")), should=convert(body.get("should")), must_not=convert(body.get("must_not")))


def to_condition(body):
    if any(key in body for key in ("must", "should", "must_not")):
        return to_filter(body)
    if "is_empty" in body:
        return edge.IsEmptyCondition(body["is_empty"]["key"])
    if "is_null" in body:
        return edge.IsNullCondition(body["is_null"]["key"])
    if "has_id" in body:
        return edge.HasIdCondition(set(point_id(i) for i in body["has_id"]))
    if "key" in body and "match" in body:
        known(body, ["key", "match"], "field condition")
        return edge.FieldCondition(body["key"], match=to_match(body["match"]))
    if "key" in body and "range" in body:
        known(body, ["key", "range"], "field condition")
        known(body["range"], ["gt", "gte", "lt", "lte"], "range")
        return edge.FieldCondition(body["key"], range=edge.RangeFloat(**body["range"]))
    raise Unsupported(f"condition {json.dumps(body)}")


def to_match(body):
    if "value" in body:
        return edge.MatchValue(body["value"])
    if "any" in body:
        return edge.MatchAny(body["any"])
    if "except" in body:
        return edge.MatchExcept(body["except"])
    raise Unsupported(f"match {json.dumps(body)}")


def to_vector(value):
    if isinstance(value, dict):
        known(value, ["indices", "values"], "sparse vector")
        return edge.SparseVector(value["indices"], value["values"])
    return value


def to_expression(body):
    """A score-boosting formula (https://qdrant.tech/documentation/search/search-relevance/#score-boosting), the
    parts QdrantStore sends: constants, `$score` and payload variables, sum, mult, exp_decay."""
    if isinstance(body, bool):
        raise Unsupported(f"expression {json.dumps(body)}")
    if isinstance(body, (int, float)):
        return edge.Expression.Constant(float(body))
    if isinstance(body, str):
        return edge.Expression.Variable(body)
    if "sum" in body:
        return edge.Expression.Sum([to_expression(e) for e in body["sum"]])
    if "mult" in body:
        return edge.Expression.Mult([to_expression(e) for e in body["mult"]])
    if "exp_decay" in body:
        params = body["exp_decay"]
        known(params, ["x", "target", "scale", "midpoint"], "exp_decay")
        target = params.get("target")
        return edge.Expression.Decay(
            edge.DecayKind.Exp,
            to_expression(params["x"]),
            target=None if target is None else to_expression(target),
            midpoint=params.get("midpoint"),
            scale=params.get("scale"),
        )
    raise Unsupported(f"expression {json.dumps(body)}")


def to_query(body, using):
    if isinstance(body, dict) and "formula" in body:
        known(body, ["formula", "defaults"], "formula query")
        return edge.Formula(to_expression(body["formula"]), defaults=body.get("defaults"))
    if isinstance(body, dict) and body.get("fusion") == "rrf":
        return edge.Fusion.Rrf(k=DEFAULT_RRF_K)
    if isinstance(body, dict) and "rrf" in body:
        known(body["rrf"], ["k", "weights"], "rrf")
        return edge.Fusion.Rrf(k=body["rrf"].get("k", DEFAULT_RRF_K), weights=body["rrf"].get("weights"))
    if isinstance(body, dict) and "nearest" in body:
        body = body["nearest"]
    if isinstance(body, list) or (isinstance(body, dict) and "indices" in body):
        return edge.Query.Nearest(to_vector(body), using=using)
    raise Unsupported(f"query {json.dumps(body)}")


def to_prefetch(body):
    known(body, ["query", "using", "limit", "filter", "prefetch", "score_threshold"], "prefetch")
    return edge.Prefetch(
        limit=body["limit"],
        query=to_query(body["query"], body.get("using")),
        prefetches=[to_prefetch(p) for p in as_list(body.get("prefetch")) or []] or None,
        filter=to_filter(body.get("filter")),
        score_threshold=body.get("score_threshold"),
    )


def point_id(value):
    """UUID strings become UUIDs, as the server parses them; integers stay integers."""
    if isinstance(value, str):
        return uuid.UUID(value)
    return value


def show_id(value):
    return str(value) if isinstance(value, (uuid.UUID, str)) else value


def with_payload(value):
    return True if value is None else value


def to_vector_params(body):
    """VectorParams of PUT /collections/{c} (https://api.qdrant.tech/api-reference/collections/create-collection):
    size, distance, on_disk, and quantization_config of the scalar kind (QDRANT_QUANTIZATION=int8)."""
    known(body, ["size", "distance", "on_disk", "quantization_config"], "vector params")
    quantization = body.get("quantization_config")
    if quantization is not None:
        known(quantization, ["scalar"], "quantization config")
        scalar = quantization["scalar"]
        known(scalar, ["type", "quantile", "always_ram"], "scalar quantization")
        if scalar["type"] != "int8":
            raise Unsupported(f"scalar quantization type {scalar['type']}")
        quantization = edge.ScalarQuantizationConfig(type=edge.ScalarType.Int8, quantile=scalar.get("quantile"), always_ram=scalar.get("always_ram"))
    return edge.EdgeVectorParams(size=body["size"], distance=DISTANCES[body["distance"]], on_disk=body.get("on_disk"), quantization_config=quantization)


class Oracle:
    def __init__(self):
        self.shard = None
        self.path = None

    def create(self, request):
        body = request["body"]
        vectors = {name: to_vector_params(v) for name, v in (body.get("vectors") or {}).items()}
        sparse = {}
        for name, params in (body.get("sparse_vectors") or {}).items():
            known(params, ["modifier"], "sparse vector params")
            sparse[name] = edge.EdgeSparseVectorParams(modifier=edge.Modifier.Idf if params.get("modifier") == "idf" else None)
        self.path = request["path"]
        self.shard = edge.EdgeShard.create(self.path, edge.EdgeConfig(vectors=vectors or None, sparse_vectors=sparse or None))
        return True

    def reload(self, _request):
        """A mutable segment keeps deleted and overwritten vectors in its sparse IDF statistics until it is
        rebuilt; loading it again from disk rebuilds them from the live points, as a server restart does."""
        self.shard.close()
        self.shard = edge.EdgeShard.load(self.path)
        return True

    def index(self, request):
        body = request["body"]
        schemas = {"keyword": edge.PayloadSchemaType.Keyword, "integer": edge.PayloadSchemaType.Integer}
        if body["field_schema"] not in schemas:
            raise Unsupported(f"index schema {body['field_schema']}")
        self.shard.update(edge.UpdateOperation.create_field_index(body["field_name"], schemas[body["field_schema"]]))
        return {"status": "completed"}

    def upsert(self, request):
        points = [
            edge.Point(point_id(p["id"]), {name: to_vector(v) for name, v in p["vector"].items()}, p.get("payload"))
            for p in request["body"]["points"]
        ]
        self.shard.update(edge.UpdateOperation.upsert_points(points))
        return {"status": "completed"}

    def delete(self, request):
        body = request["body"]
        if "points" in body:
            self.shard.update(edge.UpdateOperation.delete_points([point_id(i) for i in body["points"]]))
        else:
            self.shard.update(edge.UpdateOperation.delete_points_by_filter(to_filter(body["filter"])))
        return {"status": "completed"}

    def set_payload(self, request):
        body = request["body"]
        if "points" in body:
            self.shard.update(edge.UpdateOperation.set_payload([point_id(i) for i in body["points"]], body["payload"]))
        else:
            self.shard.update(edge.UpdateOperation.set_payload_by_filter(to_filter(body["filter"]), body["payload"]))
        return {"status": "completed"}

    def query(self, request):
        body = request["body"]
        known(body, ["prefetch", "query", "using", "filter", "limit", "offset", "with_payload", "with_vector", "score_threshold"], "query")
        query = edge.QueryRequest(
            limit=body.get("limit", 10),
            offset=body.get("offset"),
            query=to_query(body["query"], body.get("using")),
            prefetches=[to_prefetch(p) for p in as_list(body.get("prefetch")) or []] or None,
            filter=to_filter(body.get("filter")),
            score_threshold=body.get("score_threshold"),
            with_payload=body.get("with_payload", False),
        )
        points = self.shard.query(query)
        return {"points": [{"id": show_id(p.id), "version": p.version, "score": p.score, "payload": p.payload} for p in points]}

    def retrieve(self, request):
        body = request["body"]
        records = self.shard.retrieve([point_id(i) for i in body["ids"]], with_payload=with_payload(body.get("with_payload")), with_vector=False)
        return [{"id": show_id(r.id), "payload": r.payload} for r in records]

    def scroll(self, request):
        body = request["body"]
        offset = body.get("offset")
        records, next_offset = self.shard.scroll(
            edge.ScrollRequest(
                offset=None if offset is None else point_id(offset),
                limit=body.get("limit", 10),
                filter=to_filter(body.get("filter")),
                with_payload=with_payload(body.get("with_payload")),
                with_vector=False,
            )
        )
        return {"points": [{"id": show_id(r.id), "payload": r.payload} for r in records], "next_page_offset": None if next_offset is None else show_id(next_offset)}

    def facet(self, request):
        body = request["body"]
        known(body, ["key", "limit", "exact", "filter"], "facet")
        response = self.shard.facet(edge.FacetRequest(body["key"], limit=body.get("limit", 10), exact=body.get("exact", False), filter=to_filter(body.get("filter"))))
        return {"hits": [{"value": hit.value, "count": hit.count} for hit in response.hits]}

    def count(self, request):
        return {"count": self.shard.count(edge.CountRequest(filter=to_filter((request.get("body") or {}).get("filter")), exact=True))}


def main():
    oracle = Oracle()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            answer = {"result": getattr(oracle, request["op"])(request)}
        except Exception as error:  # every failure goes back to the test, which reports it
            answer = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    if oracle.shard is not None:
        oracle.shard.close()


if __name__ == "__main__":
    main()
