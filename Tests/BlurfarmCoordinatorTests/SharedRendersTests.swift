import BlurfarmCore
import Testing

/// A render is kept exactly while another output of its key is still to come.
@Suite struct SharedRendersTests {
    @Test func aRenderIsKeptUntilTheLastOutputOfItsKey() {
        var renders = SharedRenders<String, Int>(keys: ["a", "b", "a", "a"])
        #expect(renders.render(for: "a") == nil)
        renders.done("a", render: 1)
        #expect(renders.render(for: "a") == 1)
        renders.done("b", render: 2)
        #expect(renders.render(for: "b") == nil, "no other output of 'b' is to come")
        renders.done("a", render: 1)
        #expect(renders.render(for: "a") == 1)
        renders.done("a", render: 1)
        #expect(renders.render(for: "a") == nil, "let go after the last")
    }

    @Test func anOutputThatMadeNoRenderLeavesTheNextToRender() {
        var renders = SharedRenders<String, Int>(keys: ["a", "a", "a"])
        renders.done("a", render: nil)
        #expect(renders.render(for: "a") == nil)
        renders.done("a", render: 7)
        #expect(renders.render(for: "a") == 7)
    }
}
