// Next and Back from the keyboard (issue #49): ArrowRight presses the page's Next button and
// ArrowLeft its Back button, the stepper's own (ui/stepper.py: keys "NAME_next", "NAME_back"),
// on the Lessons page and the protocol stepper, in presenter mode and out of it: a lecturer at
// the projector moves on with a presenter's clicker or the keyboard. The button is pressed as
// a click would press it, so the step, its URL and its history entry (ui/history.js: a key is
// the user's action) are the button's. Nothing happens while the focus is in a control that
// uses the arrows itself (a text field, a slider, a radio group, a select box, a segmented
// control, a chart), with a modifier held (Alt+ArrowLeft is the browser's Back), on a held
// key's repeats, or when the button is disabled (Back on step 1). Installed once per tab with
// ui/history.js (ui/state.py, install_history); tests/browser/test_browser_presenter.py presses them.
//
// No "less than" sign followed by a letter or a slash anywhere in this file: Streamlit's HTML
// sanitizer drops a script whose text holds one, and the scripts installed with it
// (tests/app/test_student_items.py).
(function () {
  if (window.__capeKeys) return;
  window.__capeKeys = true;
  const OWN_ARROWS = [
    "input", "textarea", "select", "[contenteditable='true']", "[contenteditable='']",
    "[role='slider']", "[role='radio']", "[role='radiogroup']", "[role='combobox']",
    "[role='listbox']", "[role='option']", "[role='tab']", "[role='tablist']",
    "[role='menu']", "[role='menuitem']", "[role='spinbutton']", "[role='textbox']",
    "[role='grid']", "[data-testid='stButtonGroup']", ".js-plotly-plot",
  ].join(", ");
  const NAMES = { ArrowRight: /^st-key-[\w-]+_next$/, ArrowLeft: /^st-key-[\w-]+_back$/ };

  function button(pattern) {
    for (const holder of document.querySelectorAll("[class*='st-key-']")) {
      if (![...holder.classList].some((name) => pattern.test(name))) continue;
      const found = holder.querySelector("button");
      if (found) return found;
    }
    return null;
  }

  window.addEventListener("keydown", function (event) {
    const pattern = NAMES[event.key];
    if (!pattern || event.defaultPrevented || event.repeat) return;
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const focus = event.target instanceof Element ? event.target : null;
    if (focus && focus.closest(OWN_ARROWS)) return;
    const target = button(pattern);
    if (!target || target.disabled) return;
    event.preventDefault();
    target.click();
  });
})();
