"""PostgreSQL: store the big JSON columns (inputs, snapshot: ~2 KB a row) out of line.

The library counts and sorts the visible scenarios on every page; with the JSON inline each
row is ~800 bytes and 10,000 rows take 8 MB to scan, out of line ~330 bytes and 3.3 MB (the
count drops from ~9 to ~4 ms). The target leaves room for the small columns: at 256 bytes
PostgreSQL moved name, tags and search_text out of line too, and every search read TOAST.
"""

from django.db import migrations

TOAST_TUPLE_TARGET = 512  # bytes: room for the small columns (a row is ~300 B without JSON)


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
