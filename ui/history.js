// Streamlit writes a bound widget's new value into the URL with history.replaceState, so the
// browser's Back button would leave the app instead of undoing the change. Turn each such
// change into its own history entry. Streamlit also rewrites the query (and pushes the current
// path again) just before a page change: both are undone, so Back returns to the old page with
// its settings. Installed once per tab; docs/state.md.
(function () {
  if (window.__capeHistory) return;
  window.__capeHistory = true;
  const replace = history.replaceState.bind(history);
  const push = history.pushState.bind(history);
  let pending = null; // {before, state, url, timer}
  let arriving = null; // timer while a new page's entry may still be completed (pushState)
  function arrived() {
    clearTimeout(arriving);
    arriving = null;
  }
  function settle() {
    if (!pending) return;
    const p = pending;
    pending = null;
    clearTimeout(p.timer);
    replace(p.state, "", p.before);
    push(p.state, "", p.url);
  }
  // Show a same-page URL at once; it becomes its own history entry (settle) after `ms`
  // unless another same-page change or a page change comes first.
  function defer(state, title, url, href, ms) {
    if (!pending) {
      pending = {before: location.href, state: state, url: null, timer: null};
    }
    clearTimeout(pending.timer);
    pending.url = href;
    pending.state = state;
    replace(state, title, url);
    pending.timer = setTimeout(settle, ms);
  }
  history.replaceState = function (state, title, url) {
    if (url) {
      const next = new URL(url, location.href);
      if (next.pathname === location.pathname && next.search !== location.search) {
        arrived();
        defer(state, title, url, next.href, 250);
        return;
      }
    }
    return replace(state, title, url);
  };
  // Before a page change Streamlit pushes the *current* path once more (with the old or the
  // next page's keys), then the new page's path when the server answers (up to ~2 s later).
  // So a same-path push updates the URL at once but becomes its own entry only after 2 s; a
  // page change within that time restores the old entry first (Back returns to the old page
  // with its settings).
  //
  // The new page's path may be pushed before the server has said which query it carries (with
  // no query, or the old page's): the server's answer, a same-path push that can come seconds
  // later on a busy server, then completes the new entry in place instead of adding one (else
  // Back would stop on the half-made URL). The first user change, or 5 s, ends that window.
  history.pushState = function (state, title, url) {
    const next = new URL(url, location.href);
    if (next.pathname === location.pathname) {
      if (arriving) {
        arrived();
        return replace(state, title, url);
      }
      defer(state, title, url, next.href, 2000);
      return;
    }
    if (pending) {  // a page change right after a query rewrite: keep the old entry as it was
      clearTimeout(pending.timer);
      replace(history.state, "", pending.before);
      pending = null;
    }
    arrived();
    arriving = setTimeout(arrived, 5000);
    return push(state, title, url);
  };
  window.addEventListener("popstate", function () {
    if (pending) { clearTimeout(pending.timer); pending = null; }
    arrived();
  }, true);
})();
