// The console's plan form: shows the fields of the chosen kind of plan and hides the others.
const form = document.getElementById("plan-form");
const kind = document.getElementById("kind");

function showFieldsOfKind() {
  for (const node of form.querySelectorAll("[data-kinds]")) {
    node.hidden = !node.dataset.kinds.split(" ").includes(kind.value);
  }
}

if (form && kind) {
  kind.addEventListener("change", showFieldsOfKind);
  showFieldsOfKind();
}
