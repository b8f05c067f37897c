// The one way pages build their elements.

/**
 * A new element with `properties` set and `children` (elements or texts) appended. Properties are the element's
 * own (className, htmlFor, textContent, hidden, onclick, …); a name with a dash (aria-…, data-…) is set as an
 * attribute. A property that is undefined, null or false is left out, as is a missing child.
 */
export function element(tag, properties = {}, children = []) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(properties)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.includes("-")) node.setAttribute(name, value === true ? "" : String(value));
    else node[name] = value;
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}
