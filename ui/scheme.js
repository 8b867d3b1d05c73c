// The charts' lettering follows the theme the script saw when it last ran (ui/presenter.py):
// Streamlit repaints the page at once when the system's light/dark setting changes, but
// reruns nothing, so the charts kept the other scheme's lettering (dark grey on a dark page).
// On that change, once Streamlit has taken the new theme (the app's background changed; a
// rerun asked before that tells the server the old one), ask for a rerun as the R key does.
// Installed once per tab; docs/state.md.
(function () {
  if (window.__capeScheme) return;
  window.__capeScheme = true;
  const background = () => {
    const app = document.querySelector('[data-testid="stApp"]') || document.body;
    return getComputedStyle(app).backgroundColor;
  };
  function rerun() {
    // Streamlit's rerun shortcut, pressed and released (a key left down blocks the next)
    const key = { key: "r", code: "KeyR", keyCode: 82, which: 82, bubbles: true };
    window.__capeRerunKey = true; // ui/history.js: no user action, no history entry
    try {
      for (const type of ["keydown", "keypress", "keyup"]) {
        document.dispatchEvent(new KeyboardEvent(type, key));
      }
    } finally {
      window.__capeRerunKey = false;
    }
  }
  // The background of the scheme the script last learnt. On a page's first change Streamlit
  // takes the new theme before this listener runs (the background is new already, and waiting
  // for it to change again ran into the 3 s limit: the charts kept the old lettering that
  // long); on later changes it takes it after. Either shows as a background unlike this one.
  let learnt = background();
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", function () {
    const before = background();
    let tries = 0;
    const timer = setInterval(function () {
      tries += 1;
      const now = background();
      if (now !== before || now !== learnt || tries >= 60) {  // 3 s at most
        clearInterval(timer);
        learnt = now;
        rerun();
      }
    }, 50);
  });
})();
