/** The dialog a guest sees after their free identification (SPEC section 4 "Guest counter"). */
import { Modal } from "../Modal";

export function GuestDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  return (
    <Modal
      open={open}
      onClose={onClose}
      title="Authentication Required"
      description="First trial complete! Create a free account or sign in to keep identifying movies and TV shows."
      className="id-auth-dialog"
    >
      <div className="island-dialog-actions">
        <button type="button" className="btn btn-ghost" onClick={onClose}>
          Not now
        </button>
        <a className="btn btn-primary" href="/auth">
          Continue with Account
        </a>
      </div>
    </Modal>
  );
}
