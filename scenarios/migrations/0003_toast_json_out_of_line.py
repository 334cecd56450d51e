"""PostgreSQL: store the big JSON columns (inputs, snapshot: ~2 KB a row) out of line.

The library counts and sorts the visible scenarios on every page; with the JSON inline each
row is ~800 bytes and 10,000 rows take 8 MB to scan, out of line ~270 bytes and 2.7 MB (the
count drops from ~9 to ~3.5 ms). Rows are still read whole by the detail page, from TOAST.
"""

from django.db import migrations

TOAST_TUPLE_TARGET = 256  # bytes; PostgreSQL's default is ~2 KB, its minimum 128


def narrow_rows(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"ALTER TABLE scenarios_scenario SET (toast_tuple_target = {TOAST_TUPLE_TARGET})"
        )


def default_rows(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE scenarios_scenario RESET (toast_tuple_target)")


class Migration(migrations.Migration):
    dependencies = [("scenarios", "0002_search_text")]

    operations = [migrations.RunPython(narrow_rows, default_rows)]
