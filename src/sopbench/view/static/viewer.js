// Filters apply as soon as a value is chosen (without this script, the form's button does it).
for (const select of document.querySelectorAll("select[data-autosubmit]")) {
  select.addEventListener("change", () => select.form.submit());
}
// A shared list URL names only the filters in use: empty fields are left out of the query.
for (const form of document.querySelectorAll("form#filters")) {
  form.addEventListener("submit", () => {
    for (const field of form.querySelectorAll("input, select")) {
      if (!field.value) field.disabled = true;
    }
  });
}
// Live sources: the page polls /api/status (every few seconds); the server reads the sources that
// grew. The header names the sources in progress; the list reloads when episodes were added.
const live = document.getElementById("live");
if (live) {
  const shown = Number(live.dataset.episodes);
  const poll = async () => {
    try {
      const answer = await fetch(live.dataset.status, { cache: "no-store" });
      const status = await answer.json();
      const running = status.sources.filter((s) => s.in_progress);
      live.textContent = running.length
        ? "in progress: " + running.map((s) => s.name.split("/").pop() + " (" + s.episodes + ")").join(", ")
        : "";
      live.classList.toggle("in-progress", running.length > 0);
      if (status.episodes !== shown) {
        if (document.getElementById("episodes")) {
          location.reload();
          return;
        }
        live.textContent += " · " + (status.episodes - shown) + " new episodes (reload the list)";
      }
      setTimeout(poll, status.polling_s * 1000);
    } catch (error) {
      setTimeout(poll, 10000);
    }
  };
  setTimeout(poll, 1000);
}
