"""Evidence about an API from outside the run: upstream tests and documentation.

- census.census(tests_dir, apis): where a test tree uses each API, directly or through
  wrappers found in the installed torch's source; device-generic classes; skips.
- official_docs.load_official_docs(docs_dir): own page / anchor / absent per API.
- vendor_docs.load_vendor_docs(root, torch_version): the vendor (Ascend) support tables,
  index.lookup(api) through aliases; entries carry chips, limits, dtypes, source + line.
- writer.write_vendor_entry(api, chips, limits, url): a missing entry, vendor format.
- rules.decide(tests, involvement): the seeds' "add tests / priority" columns.

Nothing here runs tests or touches a device. app/evidence.py puts the parts together.
"""
