// A DOM node built outside Preact, inside an element Preact renders: sanitized markdown
// (markdown.ts), a render descriptor or a diff (descriptors.ts, diff.ts; text nodes only). Built
// once per value, and again only when the value changes; Preact never touches what it holds.
import { Component } from "preact";

/** A DOM node made outside Preact (sanitized markdown, a descriptor), placed once per `value`. */
export class Foreign<T> extends Component<{ tag?: string; class?: string; hidden?: boolean; value: T; make: (value: T) => Node }> {
  override shouldComponentUpdate(next: { value: T; hidden?: boolean }): boolean {
    return next.value !== this.props.value || next.hidden !== this.props.hidden;
  }
  override componentDidMount(): void {
    this.place();
  }
  override componentDidUpdate(previous: { value: T }): void {
    if (previous.value !== this.props.value) this.place();
  }
  place(): void {
    (this.base as HTMLElement).replaceChildren(this.props.make(this.props.value));
  }
  override render() {
    const Tag = (this.props.tag || "div") as "div";
    return <Tag class={this.props.class} hidden={this.props.hidden} />;
  }
}

