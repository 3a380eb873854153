"""`graphmem.store.connection.rows` on what the real driver hands back: nodes, relationships,
paths and temporal values come out as ``native(record.data())`` makes them."""

from __future__ import annotations

import neo4j

from graphmem.config import Settings
from graphmem.store.connection import native, rows

QUERY = """
CREATE p = (a:RowsProbe {name: 'a', at: datetime('2023-05-08T13:56:00+02:00')})
           -[r:ROWS_PROBE {w: 1}]->(b:RowsProbe {name: 'b'})
WITH a, r, b, p
RETURN a, r, p, [a, b] AS nodes, {node: b, at: a.at, day: date('2023-05-08')} AS map,
       a.name AS name, 0.5 AS score, [{id: 'x', score: 0.25}] AS hits
"""


def test_rows_of_graph_values_are_what_record_data_and_native_give(settings: Settings) -> None:
    driver = neo4j.GraphDatabase.driver(
        settings.bolt_uri, auth=(settings.neo4j_user, settings.resolved_password() or ""))
    try:
        records, _, _ = driver.execute_query(QUERY)
        driver.execute_query("MATCH (n:RowsProbe) DETACH DELETE n")
    finally:
        driver.close()
    got = rows(records)
    assert got == [native(r.data()) for r in records]
    assert got[0]["a"]["at"].isoformat() == "2023-05-08T11:56:00+00:00"
    assert got[0]["hits"] == [{"id": "x", "score": 0.25}]
