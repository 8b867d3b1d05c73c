"""Land on the section a link names (:mod:`learning.sections`), once the page has drawn.

Streamlit scrolls to a header whose anchor is the URL's ``#fragment``, but a page link cannot
carry a fragment, and a header far down a page mounts before the charts above it are painted,
so the scroll would be lost as they grow. Instead the page names the section in the query
string and a small script waits until the script run has finished, scrolls the header to the
top of the view, and keeps it there while the page above it settles — until the reader
scrolls, clicks or types, which always wins.
"""

from __future__ import annotations

import json

import streamlit as st

from learning.sections import PARAM, requested

# The sticky top bar of the app covers about 3.75rem: the header lands just below it.
_SCRIPT = """<script>(() => {
  const name = %s, page = location.pathname;
  const key = page + '#' + name;
  if (window.__capeLanded === key) return;
  window.__capeLanded = key;
  let moved = false;
  const stop = () => { moved = true; };
  for (const kind of ['wheel', 'touchstart', 'keydown', 'mousedown'])
    window.addEventListener(kind, stop, {once: true, capture: true});
  const start = performance.now();
  let last = null, still = null;
  const tick = () => {
    const now = performance.now();
    if (moved || location.pathname !== page || now - start > 30000) return;
    const target = document.getElementById(name);
    const app = document.querySelector("[data-testid='stApp']");
    const idle = app && app.getAttribute('data-test-script-state') === 'notRunning';
    if (target && idle) {
      target.style.scrollMarginTop = '4rem';
      target.scrollIntoView({block: 'start'});
      const top = Math.round(target.getBoundingClientRect().top);
      if (top === last) {
        if (still === null) still = now;
        if (now - still > 1500) return;  // the page has stopped growing above the section
      } else {
        still = null;
      }
      last = top;
    }
    setTimeout(tick, 100);
  };
  tick();
})();</script>"""


def land() -> str | None:
    """If the URL names a known section, scroll to it once this page has drawn (app.py, after
    the page ran). Returns the section's anchor, or None."""
    name = requested(st.query_params.get_all(PARAM))
    if name is not None:
        st.sidebar.html(_SCRIPT % json.dumps(name), unsafe_allow_javascript=True)
    return name
