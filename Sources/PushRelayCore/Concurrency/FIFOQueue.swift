/// A first-in first-out queue on an array: taking from the front moves an index, and the array is compacted once most
/// of it is behind that index. An emptied queue gives its storage back, so an idle owner holds none.
public struct FIFOQueue<Element> {
    private var items: [Element] = []
    private var head = 0

    public init() {}

    public var count: Int { items.count - head }
    public var isEmpty: Bool { head == items.count }
    public var first: Element? { isEmpty ? nil : items[head] }

    public mutating func append(_ element: Element) { items.append(element) }

    /// Takes the first element out, if there is one.
    @discardableResult
    public mutating func popFirst() -> Element? {
        guard head < items.count else { return nil }
        let element = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: false)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            // A consumer that never catches up: drop the taken prefix now and then, not on every element.
            items.removeFirst(head)
            head = 0
        }
        return element
    }
}
