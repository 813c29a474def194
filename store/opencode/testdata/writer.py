"""A foreign writer for the tests: another process writing an opencode
database the way opencode does (WAL, one transaction per change).

  writer.py DB load SCHEMA EXPORT   create DB from opencode's DDL and
                                    the rows of a db-export JSONL
  writer.py DB exec                 run the SQL read from stdin in one
                                    transaction
"""
import json
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "load":
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(open(sys.argv[3]).read())
    db.execute("BEGIN")
    for line in open(sys.argv[4]):
        rec = json.loads(line)
        row = rec["row"]
        cols = list(row)
        vals = [json.dumps(v) if isinstance(v, (dict, list)) else v for v in row.values()]
        db.execute("INSERT INTO %s (%s) VALUES (%s)" % (rec["table"], ", ".join(cols), ", ".join("?" * len(cols))), vals)
    db.execute("COMMIT")
else:
    db.executescript("BEGIN IMMEDIATE;\n" + sys.stdin.read() + "\nCOMMIT;")
db.close()
