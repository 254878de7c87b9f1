// Filters apply as soon as a value is chosen (without this script, the form's button does it).
for (const select of document.querySelectorAll("select[data-autosubmit]")) {
  select.addEventListener("change", () => select.form.submit());
}
